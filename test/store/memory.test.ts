import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import { sampleRecord } from '../../src/store/contract.js';
import type { MemoryStore } from '../../src/store/memory.js';
import { storeContract } from '../../src/store.js';

describe('memory store contract', () => {
  for (const c of storeContract({
    create: () => memoryStore(),
    corrupt: (store, key, text) => (store as MemoryStore).corrupt(key, text),
  })) {
    it(c.name, c.run);
  }
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
});
