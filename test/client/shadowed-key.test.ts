/**
 * One key names one operation, wherever it lives (DESIGN.md principle 14).
 * A keyless read is held in this process's memory, not stored; given the
 * key of a stored POST still in flight, it used to shadow it: every read
 * and write of that key went to memory while the GET was held, the POST's
 * success was written there and dropped, the stored record stayed
 * `in_flight`, and a later `resume()` sent the POST again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KeyConflictError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('a keyless read given the key of a stored operation', () => {
  it('is refused with KeyConflictError before anything is sent; the stored POST settles once', async () => {
    const h = await harness();
    const hold = h.server.hold({ key: 'pay-1' });
    const posting = h.client.send({ method: 'POST', url: '/payments', key: 'pay-1', json: { amount: 5 } });
    await h.rt.run(hold.arrived);
    const read = await h.rt
      .run(h.client.send({ method: 'GET', url: '/payments/1', key: 'pay-1' }))
      .catch((e: unknown) => e);
    expect(read).toBeInstanceOf(KeyConflictError);
    expect(read).toMatchObject({ code: 'key_conflict', key: 'pay-1' });
    hold.release();
    expect((await h.rt.run(posting)).status).toBe(201);
    expect((await h.store.get('pay-1'))?.state).toBe('succeeded');
    expect(await h.rt.run(h.client.resume())).toMatchObject({ driven: 0 });
    expect(h.server.ledger.requests.map((r) => r.method)).toEqual(['POST']);
  });
});
