/**
 * The IndexedDB store under fake-indexeddb (no fake timers: they stall it).
 * The same contract suite also runs in real Chromium (test/browser/).
 */
import 'fake-indexeddb/auto';
import { createStore, set } from 'idb-keyval';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CorruptRecordError } from '../../src/errors.js';
import type { OperationRecord } from '../../src/model.js';
import { sampleRecord, storeContract } from '../../src/store/contract.js';
import { INDEXEDDB_LAYOUT, type IndexedDbStore, indexedDbStore } from '../../src/store/indexeddb.js';
import type { OperationStore } from '../../src/store/store.js';

const { objectStore, recordPrefix, quarantinePrefix } = INDEXEDDB_LAYOUT;
let databases = 0;
const open: IndexedDbStore[] = [];

function fresh(name = `oncely-test-${++databases}`): IndexedDbStore {
  const store = indexedDbStore({ name });
  open.push(store);
  return store;
}

/** Writes raw bytes under a record's key through another connection, as a foreign writer would. */
async function writeRaw(name: string, key: string, value: unknown): Promise<void> {
  await set(`${recordPrefix}${key}`, value, createStore(name, objectStore));
}

/** Every raw key and value in the database, read through another connection. */
async function rawEntries(name: string): Promise<Map<string, unknown>> {
  return createStore(name, objectStore)('readonly', async (s) => {
    const keys = await new Promise<IDBValidKey[]>((resolve) => {
      const r = s.getAllKeys();
      r.onsuccess = () => resolve(r.result);
    });
    const values = await new Promise<unknown[]>((resolve) => {
      const r = s.getAll();
      r.onsuccess = () => resolve(r.result);
    });
    return new Map(keys.map((k, i) => [String(k), values[i]]));
  });
}

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function nameOf(store: OperationStore): string {
  return (store as IndexedDbStore).name;
}

describe('indexedDbStore: store contract (fake-indexeddb)', () => {
  const cases = storeContract({
    create: () => fresh(),
    reopen: (store) => fresh(nameOf(store)),
    corrupt: (store, key, text) => writeRaw(nameOf(store), key, text),
  });
  it('includes the durability and quarantine cases', () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'a write is visible through another handle once it resolves (durable)',
        'a corrupt record is quarantined and reported; the others keep working',
      ]),
    );
  });
  for (const c of cases) it(c.name, c.run);
});

describe('indexedDbStore: transactions', () => {
  it('asks for strict durability on every readwrite transaction, and on no readonly one', async () => {
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    const store = fresh();
    await store.put(sampleRecord('k1'));
    await store.update('k1', (r) => (r === undefined ? r : { ...r, epoch: 1 }));
    await store.get('k1');
    await store.list();
    await store.delete('k1');
    const calls = spy.mock.calls.map(([, mode, options]) => ({ mode, durability: options?.durability }));
    const writes = calls.filter((c) => c.mode === 'readwrite');
    expect(writes).toHaveLength(3);
    expect(writes.every((c) => c.durability === 'strict')).toBe(true);
    expect(spy.mock.results.filter((r) => r.type === 'return' && r.value.mode === 'readwrite').length).toBe(3);
    for (const r of spy.mock.results) {
      if (r.type === 'return' && r.value.mode === 'readwrite') expect(r.value.durability).toBe('strict');
    }
  });

  it('update reads and writes in one transaction', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    const spy = vi.spyOn(IDBDatabase.prototype, 'transaction');
    await store.update('k1', (r) => (r === undefined ? r : { ...r, epoch: 5 }));
    expect(spy).toHaveBeenCalledTimes(1);
    expect((await store.get('k1'))?.epoch).toBe(5);
  });

  it('100 concurrent increments from four handles all land', async () => {
    const first = fresh();
    const handles = [first, fresh(first.name), fresh(first.name), fresh(first.name)];
    await first.put(sampleRecord('n'));
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        handles[i % handles.length]?.update('n', (r) => (r === undefined ? r : { ...r, epoch: r.epoch + 1 })),
      ),
    );
    expect((await handles[3]?.get('n'))?.epoch).toBe(100);
  });

  it('update resolves with the record as stored, not the object the function returned', async () => {
    const store = fresh();
    const made = sampleRecord('k1');
    const stored = await store.update('k1', () => made);
    expect(stored).toEqual(made);
    expect(stored).not.toBe(made);
    made.state = 'failed';
    expect((await store.get('k1'))?.state).toBe('pending');
  });

  it('refuses to write a record that would not read back, and writes nothing', async () => {
    const store = fresh();
    const bad = { ...sampleRecord('k1'), state: 'exploded' } as unknown as OperationRecord;
    await expect(store.put(bad)).rejects.toBeInstanceOf(CorruptRecordError);
    await expect(store.update('k1', () => bad)).rejects.toBeInstanceOf(CorruptRecordError);
    expect(await store.get('k1')).toBeUndefined();
    expect(await store.quarantined()).toEqual([]);
  });

  it('refuses an update that returns another key, or a promise', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    await expect(store.update('k1', () => sampleRecord('k2'))).rejects.toThrow(/returned a record for k2/);
    const asyncFn = (async () => sampleRecord('k1')) as unknown as () => OperationRecord;
    await expect(store.update('k1', asyncFn)).rejects.toThrow(/synchronous/);
    expect(await store.get('k2')).toBeUndefined();
    expect((await rawEntries(store.name)).size).toBe(1);
  });

  it('rejects after close', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    await store.close();
    await expect(store.get('k1')).rejects.toThrow(/closed/);
  });
});

describe('indexedDbStore: quarantine', () => {
  it('moves a corrupt record aside (not deleted) and every handle sees the entry', async () => {
    const store = fresh();
    await store.put(sampleRecord('bad'));
    await writeRaw(store.name, 'bad', '{"v":1,"key":"bad"');
    expect(await store.get('bad')).toBeUndefined();
    const raw = await rawEntries(store.name);
    expect(raw.has(`${recordPrefix}bad`)).toBe(false);
    const kept = [...raw].filter(([k]) => k.startsWith(`${quarantinePrefix}bad\u0000`));
    expect(kept).toHaveLength(1);
    expect(kept[0]?.[1]).toMatchObject({ id: 'bad', raw: '{"v":1,"key":"bad"' });
    const other = fresh(store.name);
    expect((await other.quarantined()).map((q) => q.id)).toEqual(['bad']);
  });

  it('update over a corrupt record sees undefined, quarantines it and reports after commit', async () => {
    const store = fresh();
    const reports: string[] = [];
    store.onQuarantine((e) => reports.push(e.id));
    await writeRaw(store.name, 'k1', 'garbage');
    const created = await store.update('k1', (current) => current ?? sampleRecord('k1'));
    expect(created?.key).toBe('k1');
    expect(reports).toEqual(['k1']);
    expect((await store.quarantined()).map((q) => q.raw)).toEqual(['garbage']);
  });

  it('an update that throws over a corrupt record leaves it in place and reports nothing', async () => {
    const store = fresh();
    const reports: string[] = [];
    store.onQuarantine((e) => reports.push(e.id));
    await writeRaw(store.name, 'k1', 'garbage');
    await expect(
      store.update('k1', () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(reports).toEqual([]);
    expect((await rawEntries(store.name)).get(`${recordPrefix}k1`)).toBe('garbage');
  });

  it('a record stored under another key, or as a structured object that fails validation, is quarantined', async () => {
    const store = fresh();
    await writeRaw(store.name, 'k1', JSON.stringify(sampleRecord('k2')));
    await writeRaw(store.name, 'k3', { v: 1, key: 'k3' });
    await writeRaw(store.name, 'k4', sampleRecord('k4'));
    expect((await store.list()).map((r) => r.key)).toEqual(['k4']);
    const entries = await store.quarantined();
    expect(entries.map((e) => e.id).sort()).toEqual(['k1', 'k3']);
    expect(entries.find((e) => e.id === 'k1')?.problems).toEqual(['key: stored under k1 but names k2']);
    expect(entries.find((e) => e.id === 'k3')?.raw).toBe('{"v":1,"key":"k3"}');
  });

  it('two handles reading the same corrupt record quarantine it once', async () => {
    const a = fresh();
    const b = fresh(a.name);
    const reports: string[] = [];
    a.onQuarantine((e) => reports.push(`a:${e.id}`));
    b.onQuarantine((e) => reports.push(`b:${e.id}`));
    await writeRaw(a.name, 'bad', 'nope');
    await Promise.all([a.get('bad'), b.get('bad'), a.list(), b.list()]);
    expect(reports).toHaveLength(1);
    expect(await a.quarantined()).toHaveLength(1);
  });

  it('a throwing listener does not fail the read', async () => {
    const store = fresh();
    const thrown: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      thrown.push(error);
    };
    process.on('uncaughtException', onUncaught);
    try {
      store.onQuarantine(() => {
        throw new Error('listener broke');
      });
      await writeRaw(store.name, 'bad', 'nope');
      expect(await store.get('bad')).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(thrown.map((e) => (e as Error).message)).toEqual(['listener broke']);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('indexedDbStore: a connection closed under us (Safari)', () => {
  /** Makes `transaction()` find its connection closed, the next `times` calls. */
  function closeBeforeTransaction(times: number) {
    const original = IDBDatabase.prototype.transaction;
    let left = times;
    return vi.spyOn(IDBDatabase.prototype, 'transaction').mockImplementation(function (this: IDBDatabase, ...args) {
      if (left > 0) {
        left--;
        this.close();
      }
      return original.apply(this, args);
    });
  }

  it('reopens once and carries on', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    const opens = vi.spyOn(indexedDB, 'open');
    closeBeforeTransaction(1);
    await store.update('k1', (r) => (r === undefined ? r : { ...r, epoch: 3 }));
    expect(opens).toHaveBeenCalledTimes(1);
    expect((await store.get('k1'))?.epoch).toBe(3);
    expect(opens).toHaveBeenCalledTimes(1);
  });

  it('concurrent calls that find the connection closed share one reopened connection', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    const opens = vi.spyOn(indexedDB, 'open');
    closeBeforeTransaction(1);
    const bump = (r: OperationRecord | undefined) => (r === undefined ? r : { ...r, epoch: r.epoch + 1 });
    const [got, , , listed] = await Promise.all([
      store.get('k1'),
      store.update('k1', bump),
      store.update('k1', bump),
      store.list(),
    ]);
    expect(got?.key).toBe('k1');
    expect(listed.map((r) => r.key)).toEqual(['k1']);
    expect((await store.get('k1'))?.epoch).toBe(2);
    expect(opens).toHaveBeenCalledTimes(1);
  });

  it('reports InvalidStateError when the reopened connection is closing too', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    const opens = vi.spyOn(indexedDB, 'open');
    closeBeforeTransaction(2);
    await expect(store.get('k1')).rejects.toMatchObject({ name: 'InvalidStateError' });
    expect(opens).toHaveBeenCalledTimes(1);
    expect((await store.get('k1'))?.key).toBe('k1');
  });

  it('closes on versionchange so another tab can delete the database, then reopens', async () => {
    const store = fresh();
    await store.put(sampleRecord('k1'));
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.deleteDatabase(store.name);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error('blocked: the store kept its connection open'));
    });
    expect(await store.get('k1')).toBeUndefined();
    await store.put(sampleRecord('k1'));
    expect((await store.get('k1'))?.key).toBe('k1');
  });
});
