/**
 * The browser client's storage checks (browser/persistence.ts: the wipe
 * marker and `persist()`) load with `import()` at start-up: a page's first
 * send never waits for them. A load that fails (a chunk the page could not
 * fetch) is a `background:error` and touches no operation; the next check
 * (the page becoming visible, the periodic pass) loads again, and a wiped
 * database is still noticed.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { checkForWipe as CheckForWipe } from '../../src/browser/persistence.js';
import { type BrowserClient, createBrowserClient, memoryStore } from '../../src/browser.js';
import { INDEXEDDB_LAYOUT } from '../../src/store/indexeddb/layout.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { loadError } from '../helpers/load-failure.js';
import { fakeOrigin } from './fakes.js';

const load = vi.hoisted(() => ({
  failuresLeft: 0,
  attempts: 0,
  /** While set, a load waits for it: a chunk still on its way. */
  held: undefined as Promise<void> | undefined,
}));

vi.mock('../../src/browser/persistence.js', async (importOriginal) => {
  const held = load.held;
  if (held !== undefined) {
    load.attempts++;
    await held;
    load.attempts--;
  }
  return (await import('../helpers/load-failure.js')).failingLoad(load, 'persistence.js', importOriginal);
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

describe('the storage checks, loaded with import() at start-up', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('the first send does not wait for them; a failed load is reported, and the next check still finds a wipe', async () => {
    const rt = createFakeRuntime({ seed: 7 });
    const server = await startReferenceServer({ runtime: rt });
    cleanups.push(() => server.close());
    const origin = fakeOrigin(rt.track);
    const open = (options: Parameters<typeof createBrowserClient>[0]): BrowserClient => {
      const client = createBrowserClient({ runtime: rt, drainIntervalMs: 1_000, ...options });
      cleanups.push(() => client.close());
      return client;
    };

    // A chunk still on its way: the client is created and sends; the send leaves and settles meanwhile.
    let arrive: () => void = () => undefined;
    load.held = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    const store = memoryStore({ now: rt.now });
    const tab = origin.tab();
    const first = open({ baseUrl: server.url, store, fetch: rt.fetch, env: tab.env });
    const sent = await first.send({ method: 'POST', url: '/payments', key: 'p1', json: { amount: 1 } });
    expect(sent).toMatchObject({ key: 'p1', status: 201 });
    expect(server.ledger.effectCount('p1')).toBe(1);
    expect(load.attempts).toBe(1);

    // It cannot load: a background error, nothing else. The operation is as the send left it.
    const errors: Array<{ during: string; error: unknown }> = [];
    first.on('background:error', (e) => errors.push(e));
    load.failuresLeft = 1;
    load.held = undefined;
    arrive();
    await rt.run(first.ready);
    expect(errors.map((e) => e.during)).toEqual(['wipe check']);
    expect(loadError(errors[0]?.error)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(await store.get('p1')).toMatchObject({ state: 'succeeded' });
    expect(first.status().storage.wiped).toBeUndefined();
    await first.close();

    // A database remembered in localStorage, then wiped.
    const database = `checks-load-${process.pid}`;
    const { checkForWipe } = await vi.importActual<{ checkForWipe: typeof CheckForWipe }>(
      '../../src/browser/persistence.js',
    );
    const marked = await checkForWipe({
      database,
      indexedDB,
      localStorage: origin.localStorage,
      objectStore: INDEXEDDB_LAYOUT.objectStore,
      now: rt.now,
      uuid: () => 'marker-1',
    });
    expect(marked.status).toBe('fresh');
    await deleteDatabase(database);

    // The next start cannot load the checks either: the wipe is not reported yet...
    load.failuresLeft = 1;
    const attemptsBefore = load.attempts;
    const secondTab = origin.tab();
    const second = open({ database, env: { ...secondTab.env, indexedDB } });
    const wiped: unknown[] = [];
    second.on('store:wiped', (report) => wiped.push(report));
    const secondErrors: string[] = [];
    second.on('background:error', (e) => secondErrors.push(e.during));
    await rt.run(second.ready);
    expect(load.attempts).toBe(attemptsBefore + 1);
    expect(secondErrors).toEqual(['wipe check']);
    expect(wiped).toEqual([]);

    // ...and the next check (the page shown again) loads them and finds it.
    secondTab.setVisible(false);
    secondTab.setVisible(true);
    await rt.advance(100);
    expect(load.attempts).toBe(attemptsBefore + 2);
    expect(wiped).toEqual([expect.objectContaining({ database, markerId: 'marker-1' })]);
  });
});
