/**
 * A send its caller aborts while the operation waits to be let attempt
 * (`mayAttempt` says no) settles nothing: its error is built by
 * flow/calls/suspended-error.ts, loaded with `import()` only then. If that
 * cannot be loaded (a chunk the page could not fetch), the caller still gets
 * the `AbortError` fetch would give, with what the fallback judged from the
 * record (nothing was sent), and the operation stays stored with its key.
 * (A file of its own: once loaded, the test runner keeps a module for the file.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationAbortError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/suspended-error.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'suspended-error.js', importOriginal),
);

afterEach(closeAll);

describe('the error of an aborted send that had not settled, when it fails to load', () => {
  it("a send its caller aborts while it waits to be let attempt: still the caller's AbortError when the load fails", async () => {
    const h = await harness({ mayAttempt: () => false });
    load.failuresLeft = 1;
    const controller = new AbortController();
    const call = h.client.send({ method: 'POST', url: '/payments', key: 'w1', json: {}, signal: controller.signal });
    const error = h.rt.run(call).catch((e: unknown) => e);
    await h.rt.run(h.rt.sleep(10));
    controller.abort();
    const aborted = (await error) as OperationAbortError;
    expect(load.attempts).toBe(1);
    // The abort's own name, as fetch rejects, with what the fallback judged from the record: nothing was sent.
    expect(aborted.name).toBe('AbortError');
    expect(aborted).toMatchObject({
      code: 'operation_failed',
      key: 'w1',
      reason: 'aborted',
      mayHaveTakenEffect: false,
    });
    expect(await h.store.get('w1')).toMatchObject({ key: 'w1', state: 'pending', attempts: [] });
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});
