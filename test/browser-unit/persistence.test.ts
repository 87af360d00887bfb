/**
 * Wipe detection under fake-indexeddb: a database that lost its marker
 * while localStorage remembers it is reported; a first use is not.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { checkForWipe, requestPersistence } from '../../src/browser/persistence.js';
import { indexedDbStore } from '../../src/browser.js';
import { sampleRecord } from '../../src/store/contract.js';
import { INDEXEDDB_LAYOUT } from '../../src/store/indexeddb/layout.js';
import { MapStorage } from './fakes.js';

let databases = 0;
let ids = 0;

function checker(database: string, localStorage: MapStorage | undefined) {
  return () =>
    checkForWipe({
      database,
      indexedDB,
      localStorage,
      objectStore: INDEXEDDB_LAYOUT.objectStore,
      now: () => 1_000 + ids,
      uuid: () => `marker-${++ids}`,
    });
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

describe('checkForWipe', () => {
  it('first use is fresh, later starts are intact, a deleted database is reported once', async () => {
    const name = `wipe-${++databases}`;
    const storage = new MapStorage();
    const check = checker(name, storage);
    expect(await check()).toEqual({ status: 'fresh' });
    expect(await check()).toEqual({ status: 'intact' });

    await deleteDatabase(name);
    const wiped = await check();
    expect(wiped.status).toBe('wiped');
    if (wiped.status !== 'wiped') return;
    expect(wiped.report).toMatchObject({ database: name, markerId: 'marker-1' });
    expect(wiped.report.since).toBeLessThanOrEqual(wiped.report.detectedAt);
    // The new database is remembered from now on.
    expect(await check()).toEqual({ status: 'intact' });
  });

  it('the marker lives beside the operations without showing up among them', async () => {
    const name = `wipe-${++databases}`;
    await checker(name, new MapStorage())();
    const store = indexedDbStore({ name });
    await store.put(sampleRecord('k1'));
    expect((await store.list()).map((r) => r.key)).toEqual(['k1']);
    expect(await store.quarantined()).toEqual([]);
    await store.close();
  });

  it('an existing database whose localStorage memory is gone is intact, not fresh', async () => {
    const name = `wipe-${++databases}`;
    await checker(name, new MapStorage())();
    expect(await checker(name, new MapStorage())()).toEqual({ status: 'intact' });
  });

  it('tabs starting together agree on one marker: no false wipe afterwards', async () => {
    const name = `wipe-${++databases}`;
    const storage = new MapStorage();
    const results = await Promise.all([checker(name, storage)(), checker(name, storage)(), checker(name, storage)()]);
    expect(results.filter((r) => r.status === 'wiped')).toEqual([]);
    expect(await checker(name, storage)()).toEqual({ status: 'intact' });
  });

  it('says so when it cannot tell (no localStorage, or one that throws)', async () => {
    const name = `wipe-${++databases}`;
    expect((await checker(name, undefined)()).status).toBe('unavailable');
    const throwing = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => undefined,
    };
    const result = await checkForWipe({
      database: name,
      indexedDB,
      localStorage: throwing,
      objectStore: INDEXEDDB_LAYOUT.objectStore,
      now: () => 0,
      uuid: () => 'x',
    });
    expect(result.status).toBe('unavailable');
    expect(
      (
        await checkForWipe({
          database: name,
          indexedDB: undefined,
          localStorage: undefined,
          objectStore: INDEXEDDB_LAYOUT.objectStore,
          now: () => 0,
          uuid: () => 'y',
        })
      ).status,
    ).toBe('unavailable');
  });
});

describe('requestPersistence', () => {
  it('asks only when not yet persisted, and reports the answer', async () => {
    const calls: string[] = [];
    const storage = (persisted: boolean, granted: boolean) => ({
      persisted: async () => {
        calls.push('persisted');
        return persisted;
      },
      persist: async () => {
        calls.push('persist');
        return granted;
      },
    });
    expect(await requestPersistence(storage(true, false))).toBe(true);
    expect(calls).toEqual(['persisted']);
    expect(await requestPersistence(storage(false, true))).toBe(true);
    expect(await requestPersistence(storage(false, false))).toBe(false);
    expect(calls).toEqual(['persisted', 'persisted', 'persist', 'persisted', 'persist']);
    expect(await requestPersistence(undefined)).toBeUndefined();
  });
});
