/**
 * The next step (flow/drive/next-step.ts) loads with `import()`: over a
 * slow network that can take seconds. A budgeted retry of an operation
 * stored earlier waits for it before the gate's admission
 * (flow/drive/before-attempt.ts). Whatever happened meanwhile must still be
 * seen before the attempt: the client closing sends nothing more (the
 * operation stays pending for the next owner, as `close()` promises).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeAll, harness } from '../helpers/harness.js';
import { retryAfter503 } from '../helpers/load-failure.js';

/** The load waits for `release` once it has begun (`begun`). */
const load = await vi.hoisted(async () => (await import('../helpers/held-load.js')).heldLoad());

vi.mock('../../src/flow/drive/next-step.js', async (importOriginal) => {
  load.begin();
  await load.released;
  return importOriginal();
});

afterEach(closeAll);

describe('a slow load of the next step', () => {
  it('before a budgeted retry: a client closed meanwhile sends nothing, and the operation stays pending', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    const now = h.rt.now();
    // Stored by an earlier page, its last attempt answered 503: its retry needs the gate's admission.
    await h.store.put(retryAfter503('r1', `${h.server.url}/payments`, now));
    const pass = h.rt.run(h.client.resume()).catch((error: unknown) => error);
    await load.begun;
    const closed = h.client.close();
    load.release();
    await pass;
    await closed;
    expect(h.server.ledger.requestsFor('r1')).toEqual([]);
    const stored = await h.store.get('r1');
    expect(stored).toMatchObject({ state: 'pending' });
    expect(stored?.attempts).toHaveLength(1);
    expect(stored?.lease).toBeUndefined();
  });
});
