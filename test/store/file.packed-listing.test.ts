/**
 * The file store's packed listing (store/packed-listing.ts), what a resume
 * pass lists through: the same records as `listSummaries`, in the same order
 * once ordered, a corrupt file quarantined and left out; and under the
 * client, every due operation driven once, in that order, each record read
 * again when its turn comes (a record changed after the listing is driven as
 * it is then, not as listed).
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { writeOrder } from '../../src/model.js';
import { createClient, type FileStore } from '../../src/node.js';
import { packedListings } from '../../src/store/packed-listing.js';
import type { PackedSummaries } from '../../src/store/packed-summaries.js';
import type { RecordSummary } from '../../src/store/store.js';
import { sampleRecord } from '../../src/store.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { enqueueOffline } from '../helpers/file-offline.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
});

const OPEN = { state: ['pending', 'in_flight'] } as const;

/** The summaries of `packed`, in the order a pass drives from. */
function ordered(packed: PackedSummaries): RecordSummary[] {
  return Array.from(packed.earliestFirst(writeOrder), (i) => packed.at(i) as RecordSummary);
}

/** `listSummaries` of the open records (the file store has it). */
function summariesOf(store: FileStore): Promise<RecordSummary[]> {
  if (store.listSummaries === undefined) throw new Error('the file store lists summaries');
  return store.listSummaries(OPEN);
}

/** Open and finished records: ties on due time, scopes, a lease, a `seq`. */
const records = Array.from({ length: 40 }, (_, i) =>
  sampleRecord(`op-${(i * 17) % 40}`, {
    state: i % 4 === 3 ? 'succeeded' : 'pending',
    nextAttemptAt: 1_000 + (i % 3),
    createdAt: 900 + (i % 2),
    ...(i % 5 === 0 ? { seq: 900_000 + i } : {}),
    ...(i % 6 === 0 ? { scope: 'cart' } : {}),
    ...(i === 1 ? { epoch: 1, lease: { owner: 'other', until: 5_000 } } : {}),
  }),
);

describe('the file store’s packed listing', () => {
  it('lists what listSummaries lists, in its order; a corrupt record is quarantined and left out', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    for (const record of records) await store.put(record);
    fs.writeFileSync(store.pathOf('op-2'), '{"v":1,"key":"op-2","torn');
    const listing = packedListings.get(store);
    expect(listing).toBeDefined();

    const packed = await (listing as NonNullable<typeof listing>)(OPEN);
    expect((await store.quarantined()).map((entry) => entry.id)).toEqual(['op-2']);
    const listed = await summariesOf(store);
    expect(listed.map((s) => s.key)).not.toContain('op-2');
    expect(listed).toHaveLength(29);
    expect(ordered(packed)).toEqual(listed);
    await store.close();
  });

  it('lists an exclusive store’s versions written behind its files, as listSummaries does', async () => {
    const dir = tempDir();
    const store = fileStore({ dir, exclusive: true });
    for (const record of records) await store.put(record);
    await store.update('op-5', (current) => current && { ...current, nextAttemptAt: 1, state: 'in_flight' });
    await store.delete('op-6');
    const listing = packedListings.get(store) as NonNullable<ReturnType<typeof packedListings.get>>;
    const listed = await summariesOf(store);
    expect(listed[0]).toMatchObject({ key: 'op-5', state: 'in_flight' });
    expect(listed.map((s) => s.key)).not.toContain('op-6');
    expect(ordered(await listing(OPEN))).toEqual(listed);
    await store.close();
  });

  it('under the client: every due operation once, in listing order, each read again when driven', async () => {
    server = await startReferenceServer();
    const dir = tempDir();
    const keys = await enqueueOffline(
      dir,
      server.url,
      Array.from({ length: 8 }, (_, i) => ({ method: 'POST', url: '/payments', json: { op: i } })),
    );
    const store = fileStore({ dir });
    const order = (await summariesOf(store)).map((s) => s.key);
    expect([...order].sort()).toEqual([...keys].sort());
    const [, discarded = '', ...rest] = order;
    // Between the pass's listing and its drive, another process discards one operation.
    const listing = packedListings.get(store) as NonNullable<ReturnType<typeof packedListings.get>>;
    let listings = 0;
    packedListings.set(store, async (filter) => {
      const packed = await listing(filter);
      listings++;
      await store.delete(discarded);
      return packed;
    });
    // One at a time, so the server sees the drive order.
    const client = createClient({ store, baseUrl: server.url, concurrency: 1 });
    const summary = await client.resume();

    expect(listings).toBe(1);
    expect(server.ledger.effectCount(discarded)).toBe(0);
    const sent = server.ledger.requests.map((r) => r.key);
    expect(sent).toEqual([order[0], ...rest]);
    // Taken up as listed, found gone when driven: counted as left unfinished, never sent.
    expect(summary).toMatchObject({ driven: 8, succeeded: 7, unfinished: 1, heldElsewhere: 0 });
    await client.close();
    await store.close();
  });
});
