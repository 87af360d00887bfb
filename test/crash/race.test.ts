/**
 * Four processes drain one file store holding 1,000 operations written
 * ahead while offline. The store's atomic update and the engine's leases
 * must make exactly one process send each operation, never two at once.
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { enqueueOffline } from '../helpers/file-offline.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { disposeWorkerBuild, spawnWorker, workerCommand } from '../helpers/file-worker.js';
import { fileStore } from '../helpers/machine.js';

const OPERATIONS = 1_000;
const PROCESSES = 4;

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer();
  await workerCommand();
});
afterAll(async () => {
  await server.close();
  removeTempDirs();
  disposeWorkerBuild();
});

describe('four processes drain one file store', () => {
  it('1,000 operations: 1,000 effects, never two attempts of one key at once', async () => {
    const dir = tempDir('oncely-race-');
    const keys = await enqueueOffline(
      dir,
      server.url,
      Array.from({ length: OPERATIONS }, (_, i) => ({ method: 'POST', url: '/race/payments', json: { op: i } })),
    );
    expect(new Set(keys).size).toBe(OPERATIONS);
    expect(server.ledger.requests).toHaveLength(0);

    const started = Date.now();
    const workers = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        spawnWorker({
          mode: 'run',
          dir,
          baseUrl: server.url,
          path: '/race/payments',
          enqueue: 0,
          opPrefix: `p${i}`,
          // No crash here: leases long enough that no live owner ever loses one.
          leaseMs: 2_000,
          attemptTimeoutMs: 2_000,
          concurrency: 16,
        }),
      ),
    );
    const exits = await Promise.all(workers.map((w) => w.exited));
    const drainMs = Date.now() - started;
    // (stderr may carry Node warnings; a failure shows there too, with the exit code.)
    expect(exits.map((e) => (e.code === 0 ? 0 : `${e.code}: ${e.stderr}`))).toEqual(exits.map(() => 0));

    const { ledger } = server;
    const senders = new Map<string, number>();
    for (const key of keys) senders.set(key, ledger.requestsFor(key).length);
    console.log(
      `race figures: ${JSON.stringify({
        operations: OPERATIONS,
        processes: PROCESSES,
        effects: ledger.totalEffects(),
        requests: ledger.requests.length,
        maxConcurrent: ledger.maxConcurrent(),
        drainMs,
      })}`,
    );
    expect(ledger.maxConcurrent()).toBe(1);
    expect(ledger.totalEffects()).toBe(OPERATIONS);
    for (const key of keys) expect(ledger.effectCount(key), key).toBe(1);
    // Each operation was sent once: no process sent what another had done.
    expect([...senders.values()].every((n) => n === 1)).toBe(true);

    const store = fileStore({ dir });
    const records = await store.list();
    expect(records).toHaveLength(OPERATIONS);
    expect(records.every((r) => r.state === 'succeeded')).toBe(true);
    expect(await store.quarantined()).toEqual([]);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.pending'))).toEqual([]);
  }, 180_000);
});
