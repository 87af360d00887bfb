/**
 * The error of a send whose caller stopped waiting, or whose client closed,
 * before the operation settled is built by flow/calls/suspended-error.ts,
 * loaded with `import()` only then (flow/calls/settle.ts, `suspendedOf`). A
 * first send that simply succeeds never loads it. If it cannot be loaded (a
 * chunk the page could not fetch), the send still rejects with an oncely
 * error for that key, judged from the record: it stays stored with its key,
 * never to be sent again under a new key; the next such send loads it again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isOncelyError, type OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/suspended-error.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'suspended-error.js', importOriginal),
);

afterEach(closeAll);

/** A send of `key` answered 503 (retry in 30 s), interrupted by close() while it waits: its rejection. */
async function interrupted(key: string): Promise<OperationError> {
  const h = await harness({ policy: { maxAttempts: 5 } });
  h.server.script({ kind: 'status', status: 503, retryAfter: 30 });
  const retrying = new Promise<void>((resolve) => h.client.on('retry:scheduled', () => resolve()));
  const pending = h.client.send({ method: 'POST', url: '/payments', key, json: {} }).catch((e: unknown) => e);
  await h.rt.run(retrying);
  await h.client.close();
  const error = (await pending) as OperationError;
  expect(await h.store.get(key)).toMatchObject({ key, state: 'pending' });
  expect(h.server.ledger.requests).toHaveLength(1);
  return error;
}

describe('the error of a send interrupted before it settled', () => {
  it('is not loaded by a send that succeeds; a failed load still says it stays stored under its key', async () => {
    const h = await harness();
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'ok-1', json: {} }));
    expect(load.attempts).toBe(0);

    load.failuresLeft = 1;
    const offline = await interrupted('c1');
    expect(load.attempts).toBe(1);
    expect(isOncelyError(offline)).toBe(true);
    expect(offline).toMatchObject({ code: 'operation_failed', key: 'c1', state: 'pending', attempts: 1 });
    expect(offline.remediation).toMatch(/It stays stored.*Do not send it again under a new key/);
    expect(loadError(offline.cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });

    const loaded = await interrupted('c2');
    expect(load.attempts).toBe(2);
    expect(loaded).toMatchObject({ code: 'operation_failed', key: 'c2', state: 'pending', attempts: 1 });
    expect(loaded.message).toMatch(/stays stored and will be resumed/);
    // The same judgement either way: whether the attempt that reached the server may have taken effect.
    expect(offline.mayHaveTakenEffect).toBe(loaded.mayHaveTakenEffect);
  });
});
