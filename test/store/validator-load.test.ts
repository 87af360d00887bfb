/**
 * The memory and IndexedDB stores load the record validator
 * (model/spec-validator.ts) with `import()` the first time they meet a
 * record that fails the exact check (model/parse.ts): their own records
 * never need it. A call that meets one first stops before any change, loads
 * the validator and runs again; a load that fails (a chunk the page could
 * not fetch) rejects that call with the load's error and changes nothing,
 * and the next call loads again.
 */
import 'fake-indexeddb/auto';
import { createStore, get, set } from 'idb-keyval';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store/contract.js';
import { INDEXEDDB_LAYOUT, type IndexedDbStore, indexedDbStore } from '../../src/store/indexeddb.js';
import { memoryStore } from '../../src/store/memory.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/model/spec-validator.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'spec-validator.js', importOriginal),
);
// As in a browser bundle, where the stores come without `parseRecord` (the one module that imports the validator
// statically): here every module of the package is loaded as it is imported, so it stands aside.
vi.mock('../../src/model/parse-record.js', () => ({
  parseRecord: () => {
    throw new Error('parseRecord is not part of this test');
  },
}));

const { objectStore, recordPrefix } = INDEXEDDB_LAYOUT;
const open: IndexedDbStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A valid record with a field this version does not know (written by a newer one): valid, but not exact. */
const foreign = (key: string): string => JSON.stringify({ ...sampleRecord(key), addedLater: true });

describe('the record validator, loaded by the stores on need', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('is not loaded for a store’s own records; a failed load changes nothing; the next call loads it', async () => {
    const attemptsBefore = load.attempts;
    const memory = memoryStore();
    await memory.put(sampleRecord('own'));
    await memory.update('own', (r) => r && { ...r, state: 'succeeded' });
    expect(await memory.get('own')).toMatchObject({ state: 'succeeded' });
    expect(await memory.list()).toHaveLength(1);
    expect(load.attempts).toBe(attemptsBefore);

    // Memory store: a foreign record, read while the load fails.
    memory.corrupt('m1', foreign('m1'));
    load.failuresLeft = 1;
    const memoryFailed = await rejection(memory.get('m1'));
    expect(loadError(memoryFailed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 1);
    expect(await memory.quarantined()).toEqual([]);

    // IndexedDB store: an update of a foreign record (the check runs inside the transaction) while the load fails.
    const name = 'oncely-validator-load';
    const idb = indexedDbStore({ name });
    open.push(idb);
    await set(`${recordPrefix}i1`, foreign('i1'), createStore(name, objectStore));
    let calls = 0;
    const change = (r: OperationRecord | undefined) => {
      calls++;
      return r && { ...r, state: 'succeeded' as const };
    };
    load.failuresLeft = 1;
    const idbFailed = await rejection(idb.update('i1', change));
    expect(loadError(idbFailed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 2);
    expect(calls).toBe(0);
    expect(await get(`${recordPrefix}i1`, createStore(name, objectStore))).toBe(foreign('i1'));
    expect(await idb.quarantined()).toEqual([]);

    // The next call loads it and runs: the foreign field dropped, the change written once.
    const updated = await idb.update('i1', change);
    expect(load.attempts).toBe(attemptsBefore + 3);
    expect(calls).toBe(1);
    expect(updated).toMatchObject({ key: 'i1', state: 'succeeded' });
    expect(updated).not.toHaveProperty('addedLater');
    expect(await memory.get('m1')).toMatchObject({ key: 'm1' });
    expect(await memory.get('m1')).not.toHaveProperty('addedLater');

    // Loaded now: a damaged record is quarantined with a problem naming its field, without another load.
    memory.corrupt('m2', JSON.stringify({ ...sampleRecord('m2'), epoch: -1 }));
    expect(await memory.get('m2')).toBeUndefined();
    expect(await memory.quarantined()).toMatchObject([{ id: 'm2', problems: ['epoch: expected an integer >= 0'] }]);
    expect(load.attempts).toBe(attemptsBefore + 3);
  });
});
