/**
 * SIGKILLs across a fleet sharing one PostgreSQL table. Three lanes run at
 * once; each starts worker after worker, every one enqueuing a few new
 * payments and draining the whole table, and kills it at a chosen moment:
 * before a request is sent, mid-request, after the server committed but
 * before the answer arrived, or at a random time. Survivors and successors
 * take over what the dead left once its lease ends. After the last kill, two
 * workers drain the table.
 *
 * Then: every acknowledged payment is stored with its own body, succeeded,
 * and took effect exactly once; no operation was ever sent under two keys,
 * and no key carried two different requests.
 *
 * CI: 30 kills. `npm run soak:postgres`: 200 (ONCELY_PG_KILLS).
 */
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import { seededRandom } from '../../src/testing.js';
import { waitForLine } from '../helpers/file-worker.js';
import { usePgFleetSuite } from '../helpers/pg-fleet-suite.js';
import { enqueueOfflinePg, postgresForSuite, spawnPgWorker } from '../helpers/postgres.js';
import type { PgWorkerConfig } from './postgres-worker.js';

const KILLS = Number(process.env.ONCELY_PG_KILLS ?? 30);
const LANES = 3;
const PATH = '/crash/payments';
/** No child lives longer than this: the parent kills it (counted as a timer kill). */
const MAX_LIFE_MS = 4_000;
const MOMENTS = ['before-send', 'mid-request', 'lost-response', 'timer'] as const;

const bin = postgresForSuite('postgres crash');

describe.runIf(bin !== undefined)(`${KILLS} SIGKILLs across a fleet on one table`, () => {
  const suite = usePgFleetSuite(bin);

  it('0 duplicate effects, 0 lost operations, 0 key changes', async () => {
    const db = suite.db();
    const server = suite.server();
    const started = Date.now();
    const seed = Number(process.env.ONCELY_PG_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const table = 'crash';
    const base: Omit<PgWorkerConfig, 'enqueue' | 'opPrefix'> = {
      url: db.url,
      table,
      baseUrl: server.url,
      path: PATH,
      leaseMs: 200,
      attemptTimeoutMs: 500,
      concurrency: 8,
    };
    const acknowledged = new Map<string, string>();
    const byMoment: Record<string, number> = {};
    const problems: string[] = [];
    let kills = 0;
    let children = 0;

    const lane = async (index: number): Promise<void> => {
      const random = seededRandom(seed + index * 7919);
      const between = (min: number, max: number): number => Math.floor(min + random() * (max - min));
      for (let cycle = 0; kills < KILLS && cycle < KILLS * 3; cycle++) {
        const moment = MOMENTS[Math.floor(random() * MOMENTS.length)] ?? 'timer';
        let kill: PgWorkerConfig['kill'];
        let timerMs = MAX_LIFE_MS;
        if (moment === 'before-send') kill = { n: between(1, 4) };
        if (moment === 'mid-request') {
          server.script({ kind: 'delay', ms: between(200, 400), match: { path: PATH } });
          kill = { n: 1, afterMs: between(5, 120) };
        }
        if (moment === 'lost-response') {
          server.script({ kind: 'drop-after-commit', match: { path: PATH } });
          kill = { n: 1, afterMs: between(20, 400) };
        }
        if (moment === 'timer') timerMs = between(100, 900);
        const worker = await spawnPgWorker({
          ...base,
          enqueue: 3,
          opPrefix: `l${index}c${cycle}`,
          credentials: cycle % 2 === 0,
          ...(kill === undefined ? {} : { kill }),
        });
        children++;
        worker.onLine((line) => {
          const [word, key, op] = line.split(' ');
          if (word === 'enq' && key !== undefined && op !== undefined) acknowledged.set(key, op);
        });
        let timer: ReturnType<typeof setTimeout> | undefined;
        void waitForLine(worker, 'ready').then(() => {
          timer = setTimeout(() => worker.kill(), timerMs);
        });
        const exit = await worker.exited;
        clearTimeout(timer);
        if (exit.killed) {
          kills++;
          byMoment[moment] = (byMoment[moment] ?? 0) + 1;
        } else if (exit.code !== 0) {
          problems.push(`lane ${index} cycle ${cycle} (${moment}): exit ${exit.code}: ${exit.stderr.trim()}`);
        }
      }
    };
    // A backlog never tried (as an API server that only enqueues leaves it): workers without a credentials
    // callback start its first attempts in the claim itself, and are killed in the middle of that too.
    const backlog = Array.from({ length: 60 }, (_, i) => ({ url: PATH, json: { op: `backlog-${i}` } }));
    await enqueueOfflinePg(db.url, table, server.url, backlog, true);
    await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));

    // The last word: two workers drain whatever the dead left.
    const drains = await Promise.all(
      [0, 1].map((i) => spawnPgWorker({ ...base, enqueue: 0, opPrefix: `drain${i}`, credentials: i === 0 })),
    );
    for (const exit of await Promise.all(drains.map((w) => w.exited))) {
      if (exit.code !== 0) problems.push(`final drain: exit ${exit.code ?? exit.signal}: ${exit.stderr.trim()}`);
    }

    const store = postgresStore({ connectionString: db.url, table });
    const records = await store.list();
    const quarantined = await store.quarantined();
    await store.close();
    const byKey = new Map(records.map((r) => [r.key, r]));
    for (const [key, op] of acknowledged) {
      const record = byKey.get(key);
      if (record === undefined) {
        problems.push(`acknowledged operation ${op} (${key}) is lost`);
        continue;
      }
      const body =
        record.request.body?.encoding === 'json' ? (JSON.parse(record.request.body.text) as { op?: string }) : {};
      if (body.op !== op) problems.push(`record ${key} holds op ${String(body.op)}, acknowledged as ${op}`);
    }
    let effects = 0;
    for (const record of records) {
      if (record.state !== 'succeeded')
        problems.push(`${record.key} ended ${record.state}: ${record.failure?.message}`);
      const n = server.ledger.effectCount(record.key);
      effects += n;
      if (n !== 1) problems.push(`${record.key} has ${n} effects`);
    }
    // One operation (one body, one fingerprint) ↔ one key, in every request of the run.
    const keysByPrint = new Map<string, Set<string | undefined>>();
    const printsByKey = new Map<string | undefined, Set<string>>();
    for (const entry of server.ledger.requests) {
      if (entry.fingerprint === undefined) continue;
      keysByPrint.set(entry.fingerprint, (keysByPrint.get(entry.fingerprint) ?? new Set()).add(entry.key));
      printsByKey.set(entry.key, (printsByKey.get(entry.key) ?? new Set()).add(entry.fingerprint));
      if (entry.key === undefined || !byKey.has(entry.key)) problems.push(`request with unknown key ${entry.key}`);
    }
    const keyChanges =
      [...keysByPrint.values()].filter((k) => k.size !== 1).length +
      [...printsByKey.values()].filter((p) => p.size !== 1).length;
    console.log(
      `postgres crash figures: ${JSON.stringify({
        seed,
        kills,
        byMoment,
        children: children + drains.length,
        acknowledged: acknowledged.size,
        operations: records.length,
        effects,
        requests: server.ledger.requests.length,
        keyChanges,
        quarantined: quarantined.length,
        durationMs: Date.now() - started,
      })}`,
    );
    expect(problems).toEqual([]);
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(acknowledged.size).toBeGreaterThan(0);
    expect(records.length).toBeGreaterThanOrEqual(acknowledged.size);
    expect(effects).toBe(records.length);
    expect(keyChanges).toBe(0);
    expect(quarantined).toEqual([]);
  }, 600_000);
});
