/**
 * The browser client's first send goes through the loop's usual round
 * (written ahead, then driven by the drain loop): the look before its
 * attempt (a plain one, flow/drive/first-look.ts) is bundled with the
 * client, and the later rounds' chunk (flow/drive/later-round.ts: the full
 * look, the wait for a retry's time, the `headers` callback) is not loaded
 * before the request leaves,
 * as the bundle budget (bench/lib/bundle-size.ts, LOADED_LATER) counts it.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBrowserClient, memoryStore } from '../../src/browser.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { loadsAtFirstSend } from '../helpers/load-failure.js';
import { fakeOrigin } from './fakes.js';

const load = vi.hoisted(() => ({ attempts: 0 }));

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) => {
  load.attempts++;
  return importOriginal();
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the browser client's first send", () => {
  it('leaves before the later rounds are loaded; they load after its answer', async () => {
    const rt = createFakeRuntime({ seed: 7 });
    const server = await startReferenceServer({ runtime: rt });
    const tab = fakeOrigin(rt.track).tab();
    const client = createBrowserClient({
      baseUrl: server.url,
      store: memoryStore({ now: rt.now }),
      database: 'later-round-unit',
      runtime: rt,
      fetch: rt.fetch,
      env: tab.env,
    });
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    expect(await loadsAtFirstSend(client, rt, load, 'b1')).toEqual([0]);
    await vi.waitFor(() => expect(load.attempts).toBe(1));
  });
});
