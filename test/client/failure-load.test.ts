/**
 * The error of an operation that ended other than succeeded is built by
 * flow/calls/failure-error.ts, loaded with `import()` the first time a
 * caller meets one (flow/calls/settle.ts). A load that fails (a chunk the
 * page could not fetch) must not turn into an untyped error a catch-all
 * would read as "not done, send it again": the caller still gets an oncely
 * error for that key, judged from the record (it may have taken effect),
 * with the load's error as its cause. The next failure loads it again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isOncelyError, OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/failure-error.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'failure-error.js', importOriginal),
);

afterEach(closeAll);

describe('send() when the failure error fails to load', () => {
  it('still rejects with an oncely error for the key that says it may have taken effect; later failures read as always', async () => {
    const h = await harness({ policy: { maxAttempts: 1 } });
    // One attempt, answered 500: the operation ends `unknown` (it may have taken effect).
    h.server.script({ kind: 'status', status: 500 });
    load.failuresLeft = 1;
    const attemptsBefore = load.attempts;

    const first = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} })));
    expect(isOncelyError(first)).toBe(true);
    expect(first).toBeInstanceOf(OperationError);
    expect(first).toMatchObject({ key: 'p1', state: 'unknown', mayHaveTakenEffect: true });
    expect((first as Error).message).toContain('Operation p1 could not be driven (unknown)');
    expect(loadError((first as Error).cause)).toMatchObject({
      message: expect.stringContaining('Failed to fetch'),
    });
    expect(await h.client.get('p1')).toMatchObject({ state: 'unknown' });

    // The same key again, answered from the store: the module loads now and the error reads as always.
    const again = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} })));
    expect(load.attempts).toBe(attemptsBefore + 2);
    expect(again).toBeInstanceOf(OperationError);
    expect(again).toMatchObject({ key: 'p1', state: 'unknown', mayHaveTakenEffect: true, status: 500 });
    expect((again as Error).message).toContain('Operation p1 ended unknown');
    expect(h.server.ledger.requests).toHaveLength(1);
  });
});
