/**
 * Where a client keeps each record (flow/engine/placement.ts): the memory
 * store for records held in memory only is made on the first one held (the
 * browser's clients load its code then), never for a record that goes to
 * the store. A make that fails fails that call, keeps nothing and holds
 * nothing; the next held record makes it again.
 */
import { describe, expect, it } from 'vitest';
import { placedStore } from '../../../src/flow/engine/placement.js';
import { sampleRecord } from '../../../src/store/contract/sample.js';
import { memoryStore } from '../../../src/store/memory.js';
import type { OperationStore } from '../../../src/store/store.js';

describe('the memory store of records held in memory', () => {
  it('is made on the first record held, once; a failed make keeps nothing; the next held record makes it', async () => {
    const store = memoryStore();
    let makes = 0;
    let failuresLeft = 1;
    const placed = placedStore(store, async (): Promise<OperationStore> => {
      makes++;
      if (failuresLeft-- > 0) throw new TypeError('Failed to fetch dynamically imported module: memory-core.js');
      return memoryStore();
    });

    // A stored record: straight to the store, nothing made.
    await placed.put(sampleRecord('stored'));
    expect(await placed.get('stored')).toMatchObject({ key: 'stored' });
    expect(makes).toBe(0);

    // The first held record: the make fails, so does the write; released, nothing is held or kept anywhere.
    placed.hold('read-1');
    await expect(placed.update('read-1', () => sampleRecord('read-1'))).rejects.toThrow('Failed to fetch');
    placed.release('read-1');
    expect(placed.inMemory('read-1')).toBe(false);
    expect(await placed.get('read-1')).toBeUndefined();
    expect(makes).toBe(1);

    // Two held while it is made again: one make, both kept in memory, neither in the store.
    placed.hold('read-2');
    placed.hold('read-3');
    await Promise.all([placed.put(sampleRecord('read-2')), placed.put(sampleRecord('read-3'))]);
    expect(makes).toBe(2);
    expect(await placed.get('read-2')).toMatchObject({ key: 'read-2' });
    expect(await store.get('read-2')).toBeUndefined();
    expect(await placed.list()).toEqual([expect.objectContaining({ key: 'stored' })]);

    // Released: forgotten by the memory store too (held again, it is not there), and never made again.
    placed.release('read-2');
    expect(await placed.get('read-2')).toBeUndefined();
    placed.hold('read-2');
    expect(await placed.get('read-2')).toBeUndefined();
    expect(await placed.get('read-3')).toMatchObject({ key: 'read-3' });
    expect(makes).toBe(2);
  });
});
