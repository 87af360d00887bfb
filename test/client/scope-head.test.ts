/**
 * Order is data (DESIGN.md principle 12): a scope's head that fails for any
 * reason, a store error included, still holds the rest of its scope back.
 * Before, a rejected run of the head counted as "nothing ahead", and one
 * failed write on operation 0 gave effects in the order 1, 2, 0.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('a scope whose head fails on a store error', () => {
  it('the operations behind it are not sent; resume() drives the scope in order, each once', async () => {
    const h = await harness();
    const inner = h.store;
    const updates = new Map<string, number>();
    // The second write of o0 (after its write-ahead: its claim or its attempt's start) fails once.
    const flaky = forwardingStore(inner, {
      update: (key, fn, options) => {
        const n = (updates.get(key) ?? 0) + 1;
        updates.set(key, n);
        if (key === 'o0' && n === 2) return Promise.reject(new Error('EIO: i/o error'));
        return inner.update(key, fn, options);
      },
    });
    const client = h.another({ store: flaky });
    const sends = ['o0', 'o1', 'o2'].map((key) =>
      client.send({ method: 'POST', url: '/orders', key, scope: 'cart', json: { key } }).catch((e: unknown) => e),
    );
    const errors = await h.rt.run(Promise.all(sends));
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual([
      'operation_failed',
      'operation_failed',
      'operation_failed',
    ]);
    // Nothing behind the failed head was sent, and its callers are told nothing was.
    expect(h.server.ledger.requests).toHaveLength(0);
    expect(errors[1]).toMatchObject({ key: 'o1', state: 'pending', mayHaveTakenEffect: false });
    expect((await inner.get('o1'))?.state).toBe('pending');
    const summary = await h.rt.run(client.resume());
    expect(summary).toMatchObject({ succeeded: 3 });
    const order = h.server.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.key);
    expect(order).toEqual(['o0', 'o1', 'o2']);
  });

  it('when the head fails after the rest of its scope has queued behind it, resume() still drives the head first', async () => {
    const h = await harness();
    const inner = h.store;
    const updates = new Map<string, number>();
    let queued: () => void = () => undefined;
    const allQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const flaky = forwardingStore(inner, {
      update: async (key, fn, options) => {
        const n = (updates.get(key) ?? 0) + 1;
        updates.set(key, n);
        if (key === 'o0' && n === 2) {
          // o0's second write fails only once o1 and o2 are queued behind it: each held behind the one before.
          await allQueued;
          for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
          throw new Error('EIO: i/o error');
        }
        const written = await inner.update(key, fn, options);
        if (key === 'o2' && n === 1) queued();
        return written;
      },
    });
    const client = h.another({ store: flaky });
    const sends = ['o0', 'o1', 'o2'].map((key) =>
      client.send({ method: 'POST', url: '/orders', key, scope: 'cart', json: { key } }).catch((e: unknown) => e),
    );
    const errors = await h.rt.run(Promise.all(sends));
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual([
      'operation_failed',
      'operation_failed',
      'operation_failed',
    ]);
    expect(h.server.ledger.requests).toHaveLength(0);
    // o2 was held behind o1, itself held behind o0: the scope's head is o0, and a pass drives it first.
    const summary = await h.rt.run(client.resume());
    expect(summary).toMatchObject({ succeeded: 3 });
    const order = h.server.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.key);
    expect(order).toEqual(['o0', 'o1', 'o2']);
  });
});
