/**
 * The caller's `AbortError` (flow/calls/abort-error.ts) loads with
 * `import()` only when a call is stopped by its own signal
 * (flow/calls/caller-abort.ts). If it cannot be loaded (a chunk the page
 * could not fetch), the call still rejects with what the abort did: the
 * `OperationError` stopped `aborted`, saying whether it may have taken
 * effect. The next aborted call loads it again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/abort-error.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'abort-error.js', importOriginal),
);

afterEach(closeAll);

describe("the caller's AbortError, loaded when a call is aborted", () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('is not loaded by a call that succeeds; a failed load rejects with the OperationError it would wrap', async () => {
    const h = await harness();
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'ok-1', json: {} }));
    expect(load.attempts).toBe(0);

    const abortedSend = async (key: string): Promise<unknown> => {
      h.server.script({ kind: 'status', status: 503, retryAfter: 5 });
      const controller = new AbortController();
      const off = h.client.on('retry:scheduled', () => controller.abort());
      const call = h.client.send({ method: 'POST', url: '/payments', key, json: {}, signal: controller.signal });
      const error = await rejection(h.rt.run(call));
      off();
      return error;
    };
    load.failuresLeft = 1;
    const unwrapped = await abortedSend('ab-1');
    expect(load.attempts).toBe(1);
    expect(unwrapped).toBeInstanceOf(OperationError);
    expect(unwrapped).toMatchObject({ key: 'ab-1', state: 'failed', reason: 'aborted', mayHaveTakenEffect: false });

    const wrapped = await abortedSend('ab-2');
    expect(load.attempts).toBe(2);
    expect(wrapped).toBeInstanceOf(DOMException);
    expect((wrapped as DOMException).name).toBe('AbortError');
    expect(wrapped).toMatchObject({ key: 'ab-2', reason: 'aborted' });
    expect((wrapped as Error).cause).toBeInstanceOf(OperationError);
  });
});
