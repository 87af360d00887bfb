/**
 * The server half under SIGKILL: a payment API guarded by `oncely/server` on
 * PostgreSQL (server-worker.ts) is killed again and again at random moments
 * (before, during and after its handler's effect) while oncely's client
 * resends every operation with its one key. Afterwards:
 * - no operation took effect twice, on either route;
 * - transactional route: every operation succeeded, with exactly one effect
 *   (a kill rolls back the effect with its claim, and the claim is run again);
 * - plain route (effect committed before the answer is stored): every
 *   operation succeeded with one effect, or ended `unknown` (its claim was
 *   abandoned, maybe after its effect: the guard answers "outcome unknown"
 *   instead of running it again) — never failed, never lost.
 * `ONCELY_SERVER_KILLS` sets the number of kills (default 60; the issue's
 * soak ran 200).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Outcome } from '../../src/index.js';
import { seededRandom } from '../../src/testing.js';
import { bundledScript } from '../helpers/bundled-worker.js';
import { waitForLine } from '../helpers/file-worker.js';
import { freePort } from '../helpers/free-port.js';
import { postgresForSuite, startTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import type { ServerWorkerConfig } from './server-worker.js';

const KILLS = Number(process.env.ONCELY_SERVER_KILLS ?? 60);
const OPERATIONS_PER_ROUTE = 30;
const bin = postgresForSuite('server crash loop');
const worker = bundledScript(new URL('./server-worker.ts', import.meta.url));

let db: TestDatabase;
beforeAll(async () => {
  if (bin !== undefined) db = await startTestDatabase(bin);
}, 60_000);
afterAll(async () => {
  worker.dispose();
  await db?.close();
});

describe.skipIf(bin === undefined)('oncely/server under SIGKILL (PostgreSQL)', () => {
  it(`${KILLS} kills of the server: never two effects for one key, every operation settled`, async () => {
    const seed = Number(process.env.ONCELY_SERVER_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const random = seededRandom(seed);
    const port = await freePort();
    const config: ServerWorkerConfig = { databaseUrl: db.url, port, leaseMs: 1_500, handlerMs: 40 };
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      headers: () => ({ 'x-account': 'acct-1' }),
      concurrency: 16,
      policy: {
        profile: 'ietf',
        attemptTimeoutMs: 2_000,
        maxAttempts: 1_000,
        deadlineMs: 10 * 60_000,
        backoff: { baseDelayMs: 20, maxDelayMs: 200 },
        retryAfter: { maxRetryAfterMs: 5_000 },
        budget: false,
      },
    });

    const sent: { route: string; op: string; settled: Promise<Outcome> }[] = [];
    const enqueueSome = async (round: number): Promise<void> => {
      if (sent.length >= OPERATIONS_PER_ROUTE * 2) return;
      for (const route of ['tx', 'plain']) {
        const op = `${route}-${round}`;
        const { settled } = await client.enqueue({ method: 'POST', url: `/${route}/payments`, json: { op } });
        sent.push({ route, op, settled });
      }
    };

    let kills = 0;
    let spawned = 0;
    for (let round = 0; kills < KILLS; round++) {
      if (round % 2 === 0) await enqueueSome(round);
      const server = await worker.spawn(config);
      spawned++;
      const ready = await waitForLine(server, 'ready');
      expect(ready, (await Promise.race([server.exited, Promise.resolve(undefined)]))?.stderr).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 300)));
      server.kill();
      if ((await server.exited).killed) kills++;
    }
    for (let round = KILLS; sent.length < OPERATIONS_PER_ROUTE * 2; round++) await enqueueSome(round);

    // The last server lives: everything left settles.
    const last = await worker.spawn(config);
    expect(await waitForLine(last, 'ready')).toBe(true);
    const outcomes = await Promise.all(sent.map(async (entry) => ({ ...entry, outcome: await entry.settled })));
    last.kill();
    await last.exited;
    await client.close();

    const { rows } = await db.pool.query<{ route: string; op: string; n: number }>(
      'SELECT route, op, count(*)::int AS n FROM crash_payments GROUP BY route, op',
    );
    const effects = new Map(rows.map((r) => [r.op, r.n]));
    const twice = rows.filter((r) => r.n > 1).map((r) => `${r.op} ×${r.n}`);
    const states = outcomes.map((o) => `${o.route} ${o.outcome.state}`);
    console.log(
      `server crash loop: ${JSON.stringify({ seed, kills, spawned, operations: outcomes.length, effects: rows.length, states: count(states) })}`,
    );
    for (const { op, outcome } of outcomes) {
      if (!outcome.ok)
        console.log(`${op}: ${outcome.state}: ${outcome.error?.message} (effects: ${effects.get(op) ?? 0})`);
    }
    expect(twice).toEqual([]);
    expect(outcomes.length).toBe(OPERATIONS_PER_ROUTE * 2);
    for (const { route, op, outcome } of outcomes) {
      if (route === 'tx') {
        expect(outcome.state, op).toBe('succeeded');
        expect(effects.get(op), op).toBe(1);
      } else {
        expect(['succeeded', 'unknown'], op).toContain(outcome.state);
        if (outcome.state === 'succeeded') expect(effects.get(op), op).toBe(1);
      }
    }
  }, 600_000);
});

function count(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const value of values) out[value] = (out[value] ?? 0) + 1;
  return out;
}
