/**
 * Fencing on the PostgreSQL store, with real processes: a worker paused
 * (SIGSTOP) in the middle of a request, past its lease, while another
 * worker takes the operation over and completes it with the same key. When
 * the paused worker wakes up and tries to record its result, the lease
 * epoch refuses the write; the operation took effect once, under the new
 * owner's record.
 */
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres.js';
import { waitForLine } from '../helpers/file-worker.js';
import { usePgFleetSuite } from '../helpers/pg-fleet-suite.js';
import { postgresForSuite, spawnPgWorker } from '../helpers/postgres.js';

const bin = postgresForSuite('postgres fencing');

describe.runIf(bin !== undefined)('a stalled worker cannot write after another took over', () => {
  const suite = usePgFleetSuite(bin);

  it('the paused owner is refused; the operation completes once under the new owner', async () => {
    const db = suite.db();
    const server = suite.server();
    const table = 'fencing';
    const base = { url: db.url, table, baseUrl: server.url, path: '/fence/payments', concurrency: 4 };
    // The server commits the first request, then holds its response.
    const hold = server.hold({ path: '/fence/payments' });
    const stalled = await spawnPgWorker({
      ...base,
      enqueue: 1,
      opPrefix: 'stalled',
      leaseMs: 300,
      attemptTimeoutMs: 600,
    });
    await hold.arrived;
    // Paused mid-request, as a long GC pause or a frozen VM would leave it.
    stalled.child.kill('SIGSTOP');
    hold.release();
    const key = stalled.lines.find((l) => l.startsWith('enq '))?.split(' ')[1];
    expect(key).toBeDefined();

    // The lease (attempt timeout + lease) runs out; a second worker takes over and finishes.
    const successor = await spawnPgWorker({
      ...base,
      enqueue: 0,
      opPrefix: 'successor',
      leaseMs: 300,
      attemptTimeoutMs: 600,
    });
    const successorExit = await successor.exited;
    expect(successorExit.code, successorExit.stderr).toBe(0);
    const store = postgresStore({ connectionString: db.url, table });
    const settled = await store.get(key as string);
    expect(settled?.state).toBe('succeeded');

    // The stalled worker wakes up with the response of its request in hand: its write is refused.
    stalled.child.kill('SIGCONT');
    expect(await waitForLine(stalled, `fenced ${key}`)).toBe(true);
    const stalledExit = await stalled.exited;
    expect(stalledExit.code, stalledExit.stderr).toBe(0);

    const final = await store.get(key as string);
    await store.close();
    // Nothing of the stalled worker's landed after the takeover: the record is the successor's.
    expect(final).toEqual(settled);
    const attempts = final?.attempts ?? [];
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ class: 'ambiguous', sent: 'maybe' });
    expect(attempts[0]?.error).toMatch(/lost its lease during the attempt/);
    expect(attempts[1]).toMatchObject({ class: 'completed', status: 201 });
    expect(attempts[1]?.owner).not.toBe(attempts[0]?.owner);
    // One effect: the successor's request carried the same key and got the stored response.
    expect(server.ledger.effectCount(key as string)).toBe(1);
    expect(server.ledger.requestsFor(key as string).map((r) => r.outcome)).toEqual(['effect', 'replay']);
  }, 60_000);
});
