/**
 * The browser client in real Chromium against the real reference server:
 * reload mid-flight, close and reopen, two tabs, offline, 401 refresh,
 * drainer handover, and a wiped database. The page (static server) and the
 * API (reference server) are on different ports of 127.0.0.1, so every
 * request is cross-origin with a CORS preflight, as in production.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../src/testing.js';
import { chromiumForSuite } from '../helpers/browser.js';
import { firstRequestPerKey } from '../helpers/browser-resends.js';
import { useBrowserSuite } from '../helpers/browser-suite.js';
import type { OutcomeSummary, PageRequest, PageStatus } from './offline-queue.page.js';

const SUITE = 'browser client (offline queue) in Chromium';
const executablePath = chromiumForSuite(SUITE);

describe.skipIf(executablePath === undefined)(SUITE, () => {
  const { started, context, server, database } = useBrowserSuite(executablePath, {
    entry: fileURLToPath(new URL('./offline-queue.page.ts', import.meta.url)),
  });

  /** The app's URL: its API and a database of its own (each test is a separate app). */
  function appPath(api: ReferenceServer, more: Record<string, string> = {}): string {
    const query = new URLSearchParams({ api: api.url, db: database('app'), ...more });
    return `/?${query.toString()}`;
  }

  const status = (page: Page) => page.evaluate(() => window.t?.status()) as Promise<PageStatus>;
  const enqueueMany = (page: Page, requests: PageRequest[]) =>
    page.evaluate((r) => window.t?.enqueueMany(r), requests) as Promise<string[]>;
  const settled = (page: Page, keys: string[]) =>
    page.evaluate((k) => window.t?.settled(k), keys) as Promise<OutcomeSummary[]>;
  const get = (page: Page, key: string) =>
    page.evaluate((k) => window.t?.get(k), key) as Promise<OutcomeSummary | undefined>;

  /** Waits until the page's live view (subscribe) shows every key in `state`. */
  async function untilShown(page: Page, keys: string[], state: string): Promise<void> {
    await page.waitForFunction(
      ([k, s]) => {
        const ops = window.t?.latest()?.operations ?? [];
        return (k as string[]).every((key) => ops.some((o) => o.key === key && o.state === s));
      },
      [keys, state] as const,
      { polling: 25, timeout: 15_000 },
    );
  }

  async function untilLeader(page: Page): Promise<void> {
    await page.waitForFunction(() => window.t?.status().leader === true, undefined, { polling: 25, timeout: 10_000 });
  }

  /** Console errors other than Chromium's own "Failed to load resource" lines for 4xx answers. */
  function pageErrors(page: Page): string[] {
    return started()
      .errors(page)
      .filter((e) => !e.includes('Failed to load resource'));
  }

  it('1. reload mid-flight: the payment resumes after the reload with the same key; one effect', async () => {
    const api = await server();
    const ctx = await context();
    const path = appPath(api);
    const page = await started().openPage(ctx, path);
    const hold = api.hold({ path: '/payments' });
    const key = 'pay-reload-1';
    await page.evaluate((k) => window.t?.startSend({ url: '/payments', key: k, json: { amount: 4800 } }), key);
    await hold.arrived;
    // The server has charged and holds its answer; the page still has the attempt open.
    expect(api.ledger.effectCount(key)).toBe(1);
    const before = await get(page, key);
    expect(before?.state).toBe('in_flight');
    const firstOwner = (await status(page)).owner;

    await page.reload({ waitUntil: 'load' });
    await untilShown(page, [key], 'succeeded');
    const after = await get(page, key);
    const reloaded = await status(page);
    hold.release();

    expect(reloaded.owner).not.toBe(firstOwner);
    expect(after?.key).toBe(key);
    // Attempt 1 was cut by the reload (it may have been applied), attempt 2 got the stored answer.
    expect(after?.attempts.map((a) => [a.class, a.owner])).toEqual([
      ['ambiguous', firstOwner],
      ['completed', reloaded.owner],
    ]);
    expect(api.ledger.requestsFor(key).map((r) => r.outcome)).toEqual(['effect', 'replay']);
    expect(api.ledger.effectCount(key)).toBe(1);
    expect(api.ledger.totalEffects()).toBe(1);
    expect(pageErrors(page)).toEqual([]);
  });

  it('2. close and reopen: the queue completes in a new page with the keys minted before; one effect each', async () => {
    const api = await server();
    const ctx = await context();
    const path = appPath(api);
    const first = await started().openPage(ctx, path);
    const hold = api.hold({ path: '/payments' });
    const keys = await enqueueMany(first, [
      { url: '/payments', json: { amount: 1 }, scope: 'checkout' },
      { url: '/payments', json: { amount: 2 }, scope: 'checkout' },
    ]);
    const [k1, k2] = keys as [string, string];
    await hold.arrived;
    // The first is on the wire (held); the second waits for it (same scope): nothing sent for it.
    expect(api.ledger.requestsFor(k2)).toEqual([]);
    await first.close();

    const second = await started().openPage(ctx, path);
    await untilShown(second, keys, 'succeeded');
    hold.release();
    const [o1, o2] = await Promise.all(keys.map((k) => get(second, k)));
    expect(o1?.key).toBe(k1);
    expect(o2?.key).toBe(k2);
    expect(api.ledger.requestsFor(k1).map((r) => r.outcome)).toEqual(['effect', 'replay']);
    expect(api.ledger.requestsFor(k2).map((r) => r.outcome)).toEqual(['effect']);
    expect(api.ledger.effectCount(k1)).toBe(1);
    expect(api.ledger.effectCount(k2)).toBe(1);
    expect(api.ledger.totalEffects()).toBe(2);
    // Scope order held across the two pages: k2 reached the server after k1's resend.
    const order = api.ledger.requests.map((r) => r.key);
    expect(order.lastIndexOf(k1)).toBeLessThan(order.indexOf(k2));
    expect(pageErrors(second)).toEqual([]);
  });

  it('3. two tabs, 50 queued operations: each is sent by one tab only, never concurrently, and completes once', async () => {
    const api = await server({
      // A little server time per request, so that overlapping sends would show.
      handle: async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    const ctx = await context();
    const path = appPath(api);
    const a = await started().openPage(ctx, path);
    const b = await started().openPage(ctx, path);
    await untilLeader(a);
    expect((await status(b)).leader).toBe(false);

    const batch = (tab: string) =>
      Array.from({ length: 25 }, (_, i) => ({
        url: '/orders',
        json: { tab, i },
        ...(i % 5 === 0 ? {} : { scope: `${tab}-${i % 5}` }),
      }));
    const [keysA, keysB] = await Promise.all([enqueueMany(a, batch('A')), enqueueMany(b, batch('B'))]);
    const [outA, outB] = await Promise.all([settled(a, keysA), settled(b, keysB)]);
    const all = [...keysA, ...keysB];
    expect(new Set(all).size).toBe(50);
    expect([...outA, ...outB].every((o) => o.ok && o.state === 'succeeded')).toBe(true);

    const sentByA = (await a.evaluate(() => window.t?.attempts())) ?? [];
    const sentByB = (await b.evaluate(() => window.t?.attempts())) ?? [];
    const keysSentByA = new Set(sentByA.map((s) => s.key));
    const keysSentByB = new Set(sentByB.map((s) => s.key));
    // One drainer: the follower wrote its 25 ahead and waited; the leader sent all 50, once each.
    expect(keysSentByB.size).toBe(0);
    expect(keysSentByA.size).toBe(50);
    expect(sentByA).toHaveLength(50);
    expect([...keysSentByA].filter((k) => keysSentByB.has(k))).toEqual([]);
    // The server agrees: one request (as the page sent it) and one effect per key, never two at once.
    expect(firstRequestPerKey(api, '3')).toHaveLength(50);
    for (const key of all) expect(api.ledger.effectCount(key)).toBe(1);
    expect(api.ledger.maxConcurrent()).toBe(1);
    expect(api.ledger.totalEffects()).toBe(50);
    // The follower's live view saw the leader's work.
    await untilShown(b, all, 'succeeded');
    expect([...pageErrors(a), ...pageErrors(b)]).toEqual([]);
  });

  it('3c. 50 operations queued earlier, two tabs opened at once: they race for the drainer lock; each key sent once', async () => {
    const api = await server({
      handle: async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    const ctx = await context();
    const path = appPath(api);
    // Queued while offline in a tab that was then closed: nothing was sent.
    const writer = await started().openPage(ctx, path);
    await ctx.setOffline(true);
    await writer.waitForFunction(() => window.t?.status().online === false, undefined, {
      polling: 25,
      timeout: 10_000,
    });
    const keys = await enqueueMany(
      writer,
      Array.from({ length: 50 }, (_, i) => ({
        url: '/orders',
        json: { i },
        ...(i % 2 === 0 ? { scope: 'even' } : {}),
      })),
    );
    await untilShown(writer, keys, 'pending');
    await writer.close();
    await ctx.setOffline(false);
    expect(api.ledger.requests).toHaveLength(0);

    const [a, b] = await Promise.all([started().openPage(ctx, path), started().openPage(ctx, path)]);
    await Promise.all([untilShown(a, keys, 'succeeded'), untilShown(b, keys, 'succeeded')]);
    const [statusA, statusB] = await Promise.all([status(a), status(b)]);
    expect([statusA.leader, statusB.leader].filter(Boolean)).toHaveLength(1);
    const sent = [
      ...((await a.evaluate(() => window.t?.attempts())) ?? []),
      ...((await b.evaluate(() => window.t?.attempts())) ?? []),
    ];
    expect(sent).toHaveLength(50);
    expect(new Set(sent.map((s) => s.key)).size).toBe(50);
    expect(new Set(sent.map((s) => s.owner))).toEqual(new Set([statusA.leader ? statusA.owner : statusB.owner]));
    // One request per key as the page sent it (a resend by Chromium itself must change nothing), one effect each.
    const firsts = firstRequestPerKey(api, '3c');
    expect(firsts.map((r) => r.key).sort()).toEqual([...keys].sort());
    for (const key of keys) expect(api.ledger.effectCount(key)).toBe(1);
    expect(api.ledger.totalEffects()).toBe(50);
    expect(api.ledger.maxConcurrent()).toBe(1);
    const evens = keys.filter((_, i) => i % 2 === 0);
    expect(firsts.map((r) => r.key).filter((k) => evens.includes(k ?? ''))).toEqual(evens);
    expect([...pageErrors(a), ...pageErrors(b)]).toEqual([]);
  });

  it('3b. when the drainer tab closes mid-queue, the other tab takes over and finishes; one effect each', async () => {
    const api = await server({
      handle: async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 40));
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    const ctx = await context();
    const path = appPath(api, { concurrency: '2' });
    const a = await started().openPage(ctx, path);
    const b = await started().openPage(ctx, path);
    await untilLeader(a);
    const keys = await enqueueMany(
      b,
      Array.from({ length: 20 }, (_, i) => ({ url: '/orders', json: { i } })),
    );
    await api.waitForRequests(4);
    await a.close();
    await untilLeader(b);
    const outcomes = await settled(b, keys);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    for (const key of keys) expect(api.ledger.effectCount(key)).toBe(1);
    expect(api.ledger.totalEffects()).toBe(20);
    const sentByB = (await b.evaluate(() => window.t?.attempts())) ?? [];
    expect(sentByB.length).toBeGreaterThan(0);
    // What A had on the wire when it closed was resent by B with the same key: replayed or finished, never doubled.
    expect(api.ledger.requests.filter((r) => r.outcome === 'effect')).toHaveLength(20);
    expect(pageErrors(b)).toEqual([]);
  });

  it('4. offline: nothing is sent or counted; back online all 10 complete once, in scope order', async () => {
    const active = new Map<string, number>();
    const maxActive = new Map<string, number>();
    const bump = (name: string, by: number) => {
      const now = (active.get(name) ?? 0) + by;
      active.set(name, now);
      if (now > (maxActive.get(name) ?? 0)) maxActive.set(name, now);
    };
    const api = await server({
      handle: async (req) => {
        const scope = String((req.body as { scope?: string } | undefined)?.scope ?? 'none');
        bump(scope, 1);
        bump('all', 1);
        await new Promise((resolve) => setTimeout(resolve, 30));
        bump(scope, -1);
        bump('all', -1);
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    const ctx = await context();
    const page = await started().openPage(ctx, appPath(api, { concurrency: '3' }));
    await untilLeader(page);
    await ctx.setOffline(true);
    await page.waitForFunction(() => window.t?.status().online === false, undefined, { polling: 25, timeout: 10_000 });

    const requests: PageRequest[] = [
      ...Array.from({ length: 5 }, (_, i) => ({ url: '/cart', json: { scope: 'cart', i }, scope: 'cart' })),
      ...Array.from({ length: 5 }, (_, i) => ({ url: '/notes', json: { i } })),
    ];
    const keys = await enqueueMany(page, requests);
    await untilShown(page, keys, 'pending');
    // Several drain passes go by while offline: each had its chance to send, and none did.
    const passes = await page.evaluate(() => window.t?.status().drainPasses ?? 0);
    await page.waitForFunction((n) => (window.t?.status().drainPasses ?? 0) >= n + 3, passes, {
      polling: 25,
      timeout: 10_000,
    });
    expect(api.ledger.requests).toHaveLength(0);
    const offline = await Promise.all(keys.map((k) => get(page, k)));
    expect(offline.map((o) => o?.attempts.length)).toEqual(keys.map(() => 0));
    expect(offline.map((o) => o?.state)).toEqual(keys.map(() => 'pending'));

    await ctx.setOffline(false);
    const outcomes = await settled(page, keys);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    // Exactly one attempt each: the time offline cost no attempt.
    expect(outcomes.map((o) => o.attempts.length)).toEqual(keys.map(() => 1));
    for (const key of keys) expect(api.ledger.effectCount(key)).toBe(1);
    expect(firstRequestPerKey(api, 'offline')).toHaveLength(10);
    const cartKeys = keys.slice(0, 5);
    const effectOrder = api.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.key);
    expect(effectOrder.filter((k) => cartKeys.includes(k ?? ''))).toEqual(cartKeys);
    // One at a time within the scope; other scopes in parallel, up to the limit of 3.
    expect(maxActive.get('cart')).toBe(1);
    expect(maxActive.get('all')).toBeLessThanOrEqual(3);
    expect(maxActive.get('all')).toBeGreaterThanOrEqual(2);
    expect(pageErrors(page)).toEqual([]);
  });

  it('5. 401: the hook refreshes once and the same key is resent; one effect; a second 401 blocks and the scope moves on', async () => {
    const api = await server({ authorize: (authorization) => authorization === 'Bearer fresh' });
    const ctx = await context();
    const page = await started().openPage(ctx, appPath(api, { auth: '1' }));
    const [key] = await enqueueMany(page, [{ url: '/payments', json: { amount: 4800 } }]);
    const [outcome] = await settled(page, [key ?? '']);
    expect(outcome?.state).toBe('succeeded');
    expect(outcome?.attempts.map((a) => [a.class, a.status])).toEqual([
      ['correctable', 401],
      ['completed', 201],
    ]);
    expect(api.ledger.requestsFor(key ?? '').map((r) => r.outcome)).toEqual(['unauthorized', 'effect']);
    expect(api.ledger.effectCount(key ?? '')).toBe(1);
    const afterFirst = await status(page);
    expect(afterFirst.refreshes).toBe(1);
    // The headers callback ran for each attempt (credentials are never stored).
    expect(afterFirst.headerCalls).toBe(2);

    // A revoked credential: refreshing does not help, so it is blocked; the next of its scope still goes.
    const [revoked, next] = await enqueueMany(page, [
      { url: '/payments', json: { amount: 1 }, scope: 'acct', meta: { token: 'revoked' } },
      { url: '/payments', json: { amount: 2 }, scope: 'acct' },
    ]);
    const [blocked, continued] = await settled(page, [revoked ?? '', next ?? '']);
    expect(blocked?.state).toBe('blocked');
    expect(api.ledger.requestsFor(revoked ?? '').map((r) => r.outcome)).toEqual(['unauthorized', 'unauthorized']);
    expect(continued?.state).toBe('succeeded');
    expect(api.ledger.effectCount(next ?? '')).toBe(1);
    const order = api.ledger.requests.map((r) => r.key);
    expect(order.lastIndexOf(revoked)).toBeLessThan(order.indexOf(next));
    expect(pageErrors(page)).toEqual([]);
  });

  it('6. a wiped database is reported, not taken for a first use; persistent storage is asked for', async () => {
    const api = await server();
    const ctx = await context();
    const path = appPath(api, { persist: '1' });
    const page = await started().openPage(ctx, path);
    await page.waitForFunction(() => window.t?.status().persistedEvents.length === 1, undefined, {
      polling: 25,
      timeout: 10_000,
    });
    const fresh = await status(page);
    expect(typeof fresh.persisted).toBe('boolean');
    expect(fresh.wipedEvents).toEqual([]);

    // A reload with the database intact reports nothing, and the operation is still there.
    const [done] = await enqueueMany(page, [{ url: '/payments', json: { amount: 9 } }]);
    await settled(page, [done ?? '']);
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => window.t?.status().persistedEvents.length === 1, undefined, {
      polling: 25,
      timeout: 10_000,
    });
    expect((await status(page)).wipedEvents).toEqual([]);
    expect((await get(page, done ?? ''))?.state).toBe('succeeded');

    // The browser evicts the database (localStorage survives): the next start says so.
    await page.evaluate(async () => {
      await window.t?.close();
      await window.t?.deleteDatabase();
    });
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => window.t?.status().wiped !== undefined, undefined, {
      polling: 25,
      timeout: 10_000,
    });
    const after = await status(page);
    expect(after.wipedEvents).toHaveLength(1);
    expect(after.wipedEvents[0]?.database).toMatch(/^app-/);
    expect(after.wipedEvents[0]?.since).toBeLessThanOrEqual(after.wipedEvents[0]?.detectedAt ?? 0);
    expect(await get(page, done ?? '')).toBeUndefined();
    // Once reported, the new database is the one remembered: the next start is quiet again.
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => window.t?.status().persistedEvents.length === 1, undefined, {
      polling: 25,
      timeout: 10_000,
    });
    expect((await status(page)).wipedEvents).toEqual([]);
    expect(pageErrors(page)).toEqual([]);
  });
});
