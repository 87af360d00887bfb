/**
 * oncely/service-worker in real Chromium: the app's service worker drains
 * the queue its pages wrote, with every page closed, under the same lock,
 * leases and keys as the pages. The page and its worker are served from one
 * origin (the harness), the API is the reference server on another port.
 *
 * Chromium is driven through a page-level DevTools session (an about:blank
 * page of the same context: not an app page, it holds no lock) for what
 * the browser does on its own in the field: `ServiceWorker.dispatchSyncEvent`
 * (a later Background Sync retry) and `ServiceWorker.stopWorker` (the
 * browser killing the worker mid-fetch). Going back online
 * (`context.setOffline(false)`) lets Chromium fire `sync` by itself.
 */
import { fileURLToPath } from 'node:url';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from '../../src/testing.js';
import { type BrowserHarness, chromiumForSuite, startHarness } from '../helpers/browser.js';
import type { RecordSummary } from './service-worker.page.js';

const SUITE = 'service worker drainer in Chromium';
const executablePath = chromiumForSuite(SUITE);
const WORKER_OWNER = /^service-worker:/;

/** Server time per request, so overlapping sends for one key would show on its timeline. */
const slow =
  (ms: number): ReferenceServerOptions['handle'] =>
  async (req) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { status: 201, body: { id: `res_${req.effectNumber}` } };
  };

interface Chromium {
  /** Fires `sync` with `tag` at the worker now (as Chromium's own retry would). */
  sync(tag: string): Promise<void>;
  /** Stops every running version of the worker, as the browser does when it kills one. */
  stopWorker(): Promise<number>;
}

describe.skipIf(executablePath === undefined)(SUITE, () => {
  let harness: BrowserHarness | undefined;
  const contexts: BrowserContext[] = [];
  const servers: ReferenceServer[] = [];
  let databases = 0;

  const started = (): BrowserHarness => {
    if (harness === undefined) throw new Error('harness did not start');
    return harness;
  };

  async function context(): Promise<BrowserContext> {
    const c = await started().newContext();
    contexts.push(c);
    return c;
  }

  async function server(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
    const s = await startReferenceServer(options);
    servers.push(s);
    return s;
  }

  function appPath(api: ReferenceServer, more: Record<string, string> = {}): { path: string; db: string } {
    const db = `sw-${Date.now()}-${++databases}`;
    return { path: `/?${new URLSearchParams({ api: api.url, db, ...more }).toString()}`, db };
  }

  /** A DevTools session on an about:blank page of `ctx` (not an app page: no client, no lock). */
  async function chromiumOf(ctx: BrowserContext, origin: string): Promise<Chromium> {
    const blank = await ctx.newPage();
    const cdp: CDPSession = await ctx.newCDPSession(blank);
    const versions = new Map<string, { registrationId: string; runningStatus: string }>();
    cdp.on('ServiceWorker.workerVersionUpdated', (event) => {
      for (const v of event.versions) versions.set(v.versionId, v);
    });
    await cdp.send('ServiceWorker.enable');
    const registrationId = async (): Promise<string> => {
      for (let i = 0; i < 200 && versions.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const id = [...versions.values()][0]?.registrationId;
      if (id === undefined) throw new Error('no service worker registration seen');
      return id;
    };
    return {
      async sync(tag) {
        await cdp.send('ServiceWorker.dispatchSyncEvent', {
          origin,
          registrationId: await registrationId(),
          tag,
          lastChance: false,
        });
      },
      async stopWorker() {
        const running = [...versions.entries()].filter(([, v]) => v.runningStatus === 'running');
        for (const [versionId] of running) await cdp.send('ServiceWorker.stopWorker', { versionId });
        return running.length;
      },
    };
  }

  /** Opens an app page and waits for its worker to be active. */
  async function appPage(ctx: BrowserContext, path: string): Promise<Page> {
    const page = await started().openPage(ctx, path);
    await page.evaluate(() => window.sw?.ready());
    return page;
  }

  /** Goes offline, queues `requests` in `page`, waits for the sync tag, closes the page: no app page is left. */
  async function queueOfflineAndClose(
    ctx: BrowserContext,
    page: Page,
    db: string,
    requests: Array<{ url: string; json: unknown; key?: string }>,
  ): Promise<string[]> {
    await ctx.setOffline(true);
    await page.waitForFunction(() => window.sw?.online() === false, undefined, { polling: 25, timeout: 10_000 });
    const keys = (await page.evaluate((r) => window.sw?.enqueueMany(r), requests)) ?? [];
    await page.waitForFunction(async (tag) => (await window.sw?.syncTags())?.includes(tag) === true, `oncely:${db}`, {
      polling: 25,
      timeout: 10_000,
    });
    await page.close();
    return keys;
  }

  const records = (page: Page, keys: string[]) =>
    page.evaluate((k) => Promise.all(k.map((key) => window.sw?.get(key))), keys) as Promise<RecordSummary[]>;

  async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  const effectsDone = (api: ReferenceServer, keys: string[]) => () =>
    keys.every((k) => api.ledger.effectCount(k) === 1);

  beforeAll(async () => {
    if (executablePath === undefined) return;
    harness = await startHarness({
      executablePath,
      entry: fileURLToPath(new URL('./service-worker.page.ts', import.meta.url)),
      workers: { '/sw.js': fileURLToPath(new URL('./service-worker.sw.ts', import.meta.url)) },
    });
  }, 30_000);

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => undefined)));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('1. queued offline, every page closed, back online: the worker sends each once within 2 s, a later page lists them succeeded', async () => {
    const api = await server({ handle: slow(10) });
    const ctx = await context();
    const { path, db } = appPath(api);
    const page = await appPage(ctx, path);
    const requests = Array.from({ length: 10 }, (_, i) => ({ url: '/payments', json: { amount: 100 + i } }));
    const keys = await queueOfflineAndClose(ctx, page, db, requests);
    await chromiumOf(ctx, started().url);
    expect(api.ledger.requests).toHaveLength(0);

    const online = Date.now();
    await ctx.setOffline(false);
    await until(effectsDone(api, keys), 'the worker to send all 10');
    const drainedMs = Math.max(...api.ledger.requests.map((r) => r.at)) - online;
    console.info(`[sw 1] 10 operations drained by the worker ${drainedMs} ms after going online (no page open)`);
    expect(drainedMs).toBeLessThan(2_000);
    expect(api.ledger.requests).toHaveLength(10);
    expect(api.ledger.maxConcurrent()).toBe(1);

    const later = await appPage(ctx, path);
    const stored = await records(later, keys);
    expect(stored.map((r) => r.state)).toEqual(keys.map(() => 'succeeded'));
    expect(stored.every((r) => r.attempts.length === 1 && WORKER_OWNER.test(r.attempts[0]?.owner ?? ''))).toBe(true);
    expect(api.ledger.totalEffects()).toBe(10);
  });
});
