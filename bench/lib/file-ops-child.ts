/**
 * Child of bench/file-store.bench.ts, run under `strace -f -c`: whole
 * operations through a client on the file store against the JSON server
 * (its own process, not traced: it is started by the parent and passed in).
 *
 *   node --import tsx bench/lib/file-ops-child.ts <server url> <dir> <operations> <in flight>
 *
 * The parent runs it twice with different operation counts and divides the
 * difference of the counts by the difference of the operations, so start-up
 * (module loading, the store's directories) drops out. The client is closed
 * at the end: the journal's checkpoint (one fsync per record written) counts.
 */
import { createClient, fileStore } from '../../src/node.js';

const [url = '', dir = '', opsText = '0', inFlightText = '1'] = process.argv.slice(2);
const operations = Number(opsText);
const inFlight = Number(inFlightText);
const store = fileStore({ dir });
const client = createClient({ store, baseUrl: url });
let next = 0;
await Promise.all(
  Array.from({ length: inFlight }, async () => {
    for (let i = next++; i < operations; i = next++) {
      await client.send({ method: 'POST', url: '/payments', json: { amount: 4800, op: i } });
    }
  }),
);
await client.close();
// The client leaves a store it was given open: closing it runs the checkpoint (one fsync per record written).
await store.close();
