/**
 * One worker of the fleet example: a Node process with a client on the
 * shared PostgreSQL store. It accepts its share of payments (enqueue: each is
 * written ahead, then sent), then drains the shared queue with `resume()` —
 * its own payments and whatever a dead sibling left — woken by
 * LISTEN/NOTIFY, polling as the fallback, until nothing is open. On
 * PostgreSQL `resume()` claims with one statement (`claimDue`: due, unleased
 * or expired by the database's clock, scope heads only, `FOR UPDATE SKIP
 * LOCKED`), as many operations as the worker has free slots, so the workers
 * never walk the same list nor race each other for a row. It prints how many
 * payments it completed and at what rate.
 *
 * Usage: tsx worker.ts <name> <databaseUrl> <apiUrl> <first> <count>
 */
import { createClient } from 'oncely/node';
import { postgresStore } from 'oncely/postgres';

const [name, databaseUrl, api, first, count] = process.argv.slice(2);
if (name === undefined || databaseUrl === undefined || api === undefined) {
  console.error('usage: worker.ts <name> <databaseUrl> <apiUrl> <first> <count>');
  process.exit(2);
}

const store = postgresStore({ connectionString: databaseUrl, table: 'fleet_payments', poolSize: 4 });
const client = createClient({
  baseUrl: api,
  store,
  // One owner id per process: a restarted worker is a new owner, and takes over after the lease.
  owner: `${name}-${process.pid}`,
  // Short leases: a dead worker's payments move to the others within a second or two.
  leaseMs: 1_000,
  concurrency: 16,
  policy: { attemptTimeoutMs: 2_000, deadlineMs: 10 * 60_000, backoff: { baseDelayMs: 20, maxDelayMs: 200 } },
});

let sent = 0;
let completed = 0;
client.on('attempt:started', () => {
  sent++;
});
client.on('settled', (event) => {
  if (event.state === 'succeeded') completed++;
});
const started = performance.now();
const start = Number(first);
for (let i = start; i < start + Number(count); i++) {
  await client.enqueue({
    method: 'POST',
    url: '/payments',
    json: { payment: i, amount: 100 + (i % 50), currency: 'EUR' },
  });
}
console.log(`${name}: accepted ${count} payments`);

let wake: () => void = () => undefined;
store.onWake(() => wake());
for (;;) {
  await client.resume();
  if ((await store.list({ state: ['pending', 'in_flight'], limit: 1 })).length === 0) break;
  await new Promise<void>((resolve) => {
    const poll = setTimeout(resolve, 250);
    wake = () => {
      clearTimeout(poll);
      resolve();
    };
  });
}
const seconds = (performance.now() - started) / 1000;
console.log(
  `${name}: queue drained (${sent} requests sent by this worker; ${completed} payments completed in ${seconds.toFixed(1)} s, ${(completed / seconds).toFixed(0)}/s)`,
);
await client.close();
await store.close();
