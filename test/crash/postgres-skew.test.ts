/**
 * Leases on the database's clock: four processes whose clocks are off by
 * ten times the lease (two ahead, two behind) enqueue and drain one
 * PostgreSQL table while every request stays on the wire for a while. A
 * worker ahead sees every other owner's lease as long expired by its own
 * clock; one behind sees its own as far in the future. Neither may matter:
 * no key is ever sent by two workers at once, and each takes effect once.
 */
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import { usePgFleetSuite } from '../helpers/pg-fleet-suite.js';
import { postgresForSuite, spawnPgWorker } from '../helpers/postgres.js';

const LEASE_MS = 500;
const SKEWS = [10 * LEASE_MS, -10 * LEASE_MS, 10 * LEASE_MS, -10 * LEASE_MS];
const PER_WORKER = 40;
/** How long each request stays on the wire: long enough for a taker to show up mid-request. */
const ANSWER_MS = 2_000;

const bin = postgresForSuite('postgres skew');

describe.runIf(bin !== undefined)('workers with skewed clocks share one PostgreSQL table', () => {
  const suite = usePgFleetSuite(bin, {
    handle: async () => {
      await new Promise((resolve) => setTimeout(resolve, ANSWER_MS));
      return { status: 201, body: { ok: true } };
    },
  });

  it(`clocks ±${10 * LEASE_MS} ms off (lease ${LEASE_MS} ms): 0 keys sent by two workers at once, one effect each`, async () => {
    const db = suite.db();
    const server = suite.server();
    const table = 'skew';
    const spawn = (skewMs: number, i: number) =>
      spawnPgWorker({
        url: db.url,
        table,
        baseUrl: server.url,
        path: '/skew/payments',
        enqueue: i % 2 === 1 ? PER_WORKER : 0,
        opPrefix: `w${i}`,
        leaseMs: LEASE_MS,
        attemptTimeoutMs: 5_000,
        concurrency: 8,
        skewMs,
      });
    // The workers behind first: once their payments are written ahead they are on the wire, leased for
    // 5.5 s by their clocks, which the workers ahead (started now, draining only) read as long past.
    const behind = await Promise.all([1, 3].map((i) => spawn(SKEWS[i] as number, i)));
    await Promise.all(
      behind.map(
        (w) =>
          new Promise<void>((resolve) => {
            let enqueued = 0;
            w.onLine((line) => {
              if (line.startsWith('enq ') && ++enqueued === PER_WORKER) resolve();
            });
          }),
      ),
    );
    const ahead = await Promise.all([0, 2].map((i) => spawn(SKEWS[i] as number, i)));
    const workers = [...behind, ...ahead];
    const exits = await Promise.all(workers.map((w) => w.exited));
    expect(exits.map((e) => (e.code === 0 ? 0 : `${e.code}: ${e.stderr}`))).toEqual(exits.map(() => 0));
    const keys = exits.flatMap((e) => e.lines.filter((l) => l.startsWith('enq ')).map((l) => l.split(' ')[1] ?? ''));
    const { ledger } = server;
    const fenced = exits.flatMap((e) => e.lines.filter((l) => l.startsWith('fenced'))).length;
    console.log(
      `postgres skew figures: ${JSON.stringify({ keys: keys.length, requests: ledger.requests.length, fenced })}`,
    );
    expect(keys).toHaveLength(2 * PER_WORKER);
    expect(ledger.maxConcurrent()).toBe(1);
    for (const key of keys) expect(ledger.effectCount(key), key).toBe(1);
    // Nobody took over a live lease: each operation was sent exactly once.
    expect(ledger.requests).toHaveLength(keys.length);
    expect(fenced).toBe(0);
    const store = postgresStore({ connectionString: db.url, table });
    expect((await store.list()).every((r) => r.state === 'succeeded')).toBe(true);
    await store.close();
  }, 120_000);
});
