import { describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../../src/index.js';
import { sampleRecord } from '../../src/store/contract.js';
import { frozenShared, type MemoryStore } from '../../src/store/memory.js';
import { type OperationStore, storeContract } from '../../src/store.js';

describe('memory store contract', () => {
  for (const c of storeContract({
    create: () => memoryStore(),
    corrupt: (store, key, text) => (store as MemoryStore).corrupt(key, text),
  })) {
    it(c.name, c.run);
  }
});

describe('the store contract closes the handles each case opened', () => {
  /** Memory stores with a `close` that records which handle closed, in order. */
  function closing(failClose = false) {
    const closed: string[] = [];
    let made = 0;
    /** A new store, or (given one) another handle on the same storage, as reopening would give. */
    const make = (same?: OperationStore): OperationStore => {
      const name = `handle ${++made}`;
      const handle: OperationStore = same === undefined ? memoryStore() : Object.create(same);
      return Object.assign(handle, {
        close: async () => {
          closed.push(name);
          if (failClose) throw new Error(`${name} would not close`);
        },
      });
    };
    return { closed, make };
  }

  it('after each case, latest first, pass or fail, and the case keeps its own failure', async () => {
    const { closed, make } = closing();
    const cases = storeContract({ create: () => make(), reopen: (store) => make(store) });
    const across = cases.find((c) => c.name.startsWith('a write is visible through another handle'));
    expect(across).toBeDefined();
    await across?.run();
    expect(closed).toEqual(['handle 2', 'handle 1']);
    // A case that fails: what it opened is closed all the same, and its error is the one reported.
    const failing = storeContract({
      create: async () => {
        const store = make();
        return Object.assign(store, {
          get: async () => {
            throw new Error('broken get');
          },
        });
      },
    }).find((c) => c.name.length > 0);
    closed.length = 0;
    await expect(failing?.run()).rejects.toThrow();
    expect(closed).toHaveLength(1);
  });

  it('fails a passing case whose store would not close', async () => {
    const { make } = closing(true);
    const [first] = storeContract({ create: () => make() });
    await expect(first?.run()).rejects.toThrow(/closing a store failed: .*would not close/);
  });
});

describe('memory store keeps frozen records', () => {
  it('hands out the validated record itself: frozen all the way down, no copy per read', async () => {
    const store = memoryStore();
    const given = sampleRecord('k1', { meta: { cart: { items: [1, 2] } } });
    await store.put(given);
    const first = (await store.get('k1'))!;
    expect(first).toStrictEqual(given);
    expect(first).not.toBe(given);
    expect(await store.get('k1')).toBe(first);
    expect((await store.list())[0]).toBe(first);
    const items = (first.meta!.cart as { items: number[] }).items;
    expect([first, first.request, first.request.headers, first.meta, items].every(Object.isFrozen)).toBe(true);
    // The caller's object stays its own: changing it changes nothing stored.
    given.state = 'failed';
    expect((await store.get('k1'))?.state).toBe('pending');
  });

  it('an update returns the stored (frozen) record and the next read is that record', async () => {
    const store = memoryStore();
    await store.put(sampleRecord('k1'));
    const updated = await store.update('k1', (current) => current && { ...current, epoch: current.epoch + 1 });
    expect(Object.isFrozen(updated)).toBe(true);
    expect(await store.get('k1')).toBe(updated);
  });

  it('a record handed out cannot be changed: every assignment throws', async () => {
    const store = memoryStore();
    await store.put(sampleRecord('k1', { attempts: [{ n: 1, owner: 'o', startedAt: 1_000, sent: 'maybe' }] }));
    const record = (await store.get('k1'))!;
    expect(() => {
      (record as { state: string }).state = 'failed';
    }).toThrow(TypeError);
    expect(() => {
      record.request.headers['x-extra'] = 'v';
    }).toThrow(TypeError);
    expect(() => {
      (record.attempts as unknown[]).push({});
    }).toThrow(TypeError);
    expect(() => {
      (record.attempts[0] as { sent: string }).sent = 'not';
    }).toThrow(TypeError);
    expect((await store.get('k1'))?.state).toBe('pending');
  });

  it('an update shares the parts it kept from the stored record and copies only what is new', async () => {
    const store = memoryStore();
    await store.put(sampleRecord('k1', { attempts: [{ n: 1, owner: 'o', startedAt: 1_000, sent: 'maybe' }] }));
    const first = (await store.get('k1'))!;
    const added = { n: 2, owner: 'o', startedAt: 2_000, sent: 'maybe' as const };
    const second = (await store.update(
      'k1',
      (current) => current && { ...current, attempts: [...current.attempts, added] },
    ))!;
    expect(second.request).toBe(first.request);
    expect(second.backoff).toBe(first.backoff);
    expect(second.attempts[0]).toBe(first.attempts[0]);
    // The new attempt is the store's own frozen copy, not the caller's object.
    expect(second.attempts[1]).toStrictEqual(added);
    expect(second.attempts[1]).not.toBe(added);
    expect(Object.isFrozen(second.attempts[1])).toBe(true);
    added.sent = 'not' as 'maybe';
    expect((await store.get('k1'))?.attempts[1]?.sent).toBe('maybe');
  });

  it('shares data made by frozenShared with every record, and copies what the caller froze itself', async () => {
    const store = memoryStore();
    const snapshot = frozenShared({ name: 'default', backoff: { baseDelayMs: 250 }, notApplied: [408] });
    expect([snapshot, snapshot.backoff, snapshot.notApplied].every(Object.isFrozen)).toBe(true);
    await store.put(sampleRecord('k1', { policySnapshot: snapshot }));
    await store.put(sampleRecord('k2', { policySnapshot: snapshot }));
    expect((await store.get('k1'))?.policySnapshot).toBe(snapshot);
    expect((await store.get('k2'))?.policySnapshot).toBe(snapshot);
    // Frozen on the surface only (its child can still change): not trusted, copied.
    const inner = { items: [1] };
    const shallow = Object.freeze({ cart: inner });
    await store.put(sampleRecord('k3', { meta: shallow }));
    const kept = (await store.get('k3'))!;
    expect(kept.meta).not.toBe(shallow);
    inner.items.push(2);
    expect(kept.meta).toStrictEqual({ cart: { items: [1] } });
  });

  it('an update checks the fields it changed, not again the ones it kept from the stored record', async () => {
    const store = memoryStore();
    await store.put(sampleRecord('k1', { policySnapshot: { name: 'default', statuses: { '500': 'retryable' } } }));
    const first = (await store.get('k1'))!;
    // The record's dictionaries are checked key by key (`Reflect.ownKeys`): a
    // dictionary looked at is a field checked.
    const ownKeys = vi.spyOn(Reflect, 'ownKeys');
    try {
      await store.update('k1', (current) => current && { ...current, epoch: current.epoch + 1 });
      let looked = ownKeys.mock.calls.map(([target]) => target);
      expect(looked).not.toContain(first.request.headers);
      expect(looked).not.toContain(first.policySnapshot);
      const headers = { 'content-type': 'text/plain' };
      await store.update('k1', (current) => current && { ...current, request: { ...current.request, headers } });
      looked = ownKeys.mock.calls.map(([target]) => target);
      expect(looked).toContain(headers);
      expect(looked).not.toContain(first.policySnapshot);
    } finally {
      ownKeys.mockRestore();
    }
    expect((await store.get('k1'))?.request.headers).toStrictEqual({ 'content-type': 'text/plain' });
  });

  it('an update with an invalid changed field is refused, and the stored record stays as it was', async () => {
    const store = memoryStore();
    await store.put(sampleRecord('k1'));
    const before = await store.get('k1');
    await expect(store.update('k1', (current) => current && { ...current, epoch: -1 })).rejects.toThrow(
      /refusing to write/,
    );
    expect(await store.get('k1')).toBe(before);
  });

  it('an update adding a key the record does not have goes through the full check, which drops it', async () => {
    const store = memoryStore();
    await store.put(sampleRecord('k1'));
    const updated = await store.update(
      'k1',
      (current) => current && ({ ...current, surprise: true } as typeof current),
    );
    expect(updated).toStrictEqual(sampleRecord('k1'));
    expect(Object.isFrozen(updated)).toBe(true);
  });
});
