/**
 * `clear()` builds the stop of each operation it removes from the stop's
 * module (flow/decide/stop.ts), which travels in clear()'s chunk and the
 * loop's later ones, never before a first send. When it cannot load (a
 * chunk the page could not fetch), clear() rejects and removes nothing:
 * every operation stays stored, pending, unleased, with its key.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type BrowserClient, createBrowserClient, memoryStore } from '../../src/browser.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { loadError, loadsAtFirstSend, rejection, retryAfter503 } from '../helpers/load-failure.js';
import { fakeOrigin } from './fakes.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/decide/stop.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'stop.js', importOriginal),
);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("clear()'s stop, loaded on need", () => {
  // One test: once the module has loaded (or failed), the test runner keeps it for the whole file.
  it('is not loaded before a first send; a failed load makes clear() reject and removes nothing', async () => {
    const rt = createFakeRuntime({ seed: 7 });
    const server = await startReferenceServer({ runtime: rt });
    cleanups.push(() => server.close());
    const store = memoryStore({ now: rt.now });
    // Stored by an earlier page, its retry an hour away: clear() would settle it `aborted` and remove it.
    const now = rt.now();
    await store.put({ ...retryAfter503('queued', `${server.url}/payments`, now), nextAttemptAt: now + 3_600_000 });
    const tab = fakeOrigin(rt.track).tab();
    const client: BrowserClient = createBrowserClient({
      baseUrl: server.url,
      store,
      runtime: rt,
      fetch: rt.fetch,
      env: tab.env,
      drainIntervalMs: 1_000,
    });
    cleanups.push(() => client.close());
    // Every load fails: the background ones after the first answer too, silently.
    load.failuresLeft = Number.POSITIVE_INFINITY;
    expect(await loadsAtFirstSend(client, rt, load, 'p1')).toEqual([0]);

    const failed = await rejection(rt.run(client.clear()));
    expect(failed).toBeInstanceOf(Error);
    expect(loadError(failed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBeGreaterThan(0);
    // Nothing removed, nothing settled, nothing held.
    const queued = await store.get('queued');
    expect(queued).toMatchObject({ state: 'pending', attempts: [{ n: 1, class: 'retryable' }] });
    expect(queued?.lease).toBeUndefined();
    expect(await store.get('p1')).toMatchObject({ state: 'succeeded' });
  });
});
