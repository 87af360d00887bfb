/**
 * "May have taken effect" is sticky whatever layer raises the error
 * (DESIGN.md principles 3 and 9). An exclusive file store that lost its
 * directory while a request was on the wire says "nothing was read or
 * written" about the write it refused: told to the caller as is, it
 * invites a second charge under a new key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OperationError } from '../../src/index.js';
import { OwnedStoreError } from '../../src/store/file/index.js';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

const lost = (): OwnedStoreError => new OwnedStoreError('/stores/orders', 'another handle (this one lost it)');

describe('a store error after an attempt started', () => {
  it('send rejects saying it may have taken effect, never "nothing was written, try again"', async () => {
    const h = await harness();
    let owned = true;
    const losing = forwardingStore(h.store, {
      update: (key, fn, options) => (owned ? h.store.update(key, fn, options) : Promise.reject(lost())),
      get: (key) => (owned ? h.store.get(key) : Promise.reject(lost())),
    });
    const client = h.another({ store: losing });
    const hold = h.server.hold({ key: 'own1' });
    const sending = client.send({ method: 'POST', url: '/payments', key: 'own1', json: {} }).catch((e: unknown) => e);
    await h.rt.run(hold.arrived);
    // Another exclusive handle took the directory while the request was on the wire; the server charges.
    owned = false;
    hold.release();
    const error = (await h.rt.run(sending)) as OperationError;
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ key: 'own1', code: 'operation_failed', mayHaveTakenEffect: true });
    expect(error.cause).toBeInstanceOf(OwnedStoreError);
    expect(error.message).not.toMatch(/nothing was read or written/i);
    expect(error.remediation).toMatch(/never|not send it again under a new key/i);
    expect(h.server.ledger.effectCount('own1')).toBe(1);
  });
});
