/**
 * The loop's later rounds (flow/drive/later-round.ts) load with `import()`:
 * over a slow network that can take seconds. A client with a `headers`
 * callback starts that load as it is created (its every attempt calls the
 * callback in a later round); a send made before it arrives waits for it,
 * and whatever happened meanwhile is still seen before the attempt: the
 * client closing sends nothing (the operation stays pending for the next
 * owner, as `close()` promises), the headers callback is never asked.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeAll, harness } from '../helpers/harness.js';

/** The load waits for `release` once it has begun (`begun`). */
const load = await vi.hoisted(async () => (await import('../helpers/held-load.js')).heldLoad());

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) => {
  load.begin();
  await load.released;
  return importOriginal();
});

afterEach(closeAll);

describe("a slow load of the loop's later rounds", () => {
  it('begins as a client with a headers callback is created; a send waiting for it after close() sends nothing', async () => {
    const asked: number[] = [];
    const h = await harness(
      {
        headers: (ctx) => {
          asked.push(ctx.attempt);
          return { authorization: 'Bearer t' };
        },
      },
      { handle: () => ({ status: 201, body: { ok: true } }) },
    );
    // Begun by the construction alone: nothing was sent yet.
    await load.begun;
    const sending = h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} }));
    const outcome = sending.catch((error: unknown) => error);
    // Written ahead, waiting for the load.
    await vi.waitFor(async () => expect(await h.store.get('p1')).toMatchObject({ state: 'pending' }));
    const closed = h.client.close();
    load.release();
    await outcome;
    await closed;
    expect(asked).toEqual([]);
    expect(h.server.ledger.requestsFor('p1')).toEqual([]);
    const stored = await h.store.get('p1');
    expect(stored).toMatchObject({ state: 'pending', attempts: [] });
    expect(stored?.lease).toBeUndefined();
  });
});
