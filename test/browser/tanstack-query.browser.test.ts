/**
 * The TanStack Query demo (examples/tanstack-query) in real Chromium: pay
 * while offline, reload, come back online. The payment waits in IndexedDB
 * across the reload (the outbox query shows it, the new page's mutation is
 * idle: the old one died with its page), goes out once when the network is
 * back, and the handler registered for ['pay'] shows the receipt though the
 * page that clicked Pay is gone. One effect on the server; a second click
 * for the same order is still one.
 */
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTanstackDemo, type TanstackDemo } from '../../examples/tanstack-query/server.js';
import { CHROMIUM_ARGS, chromiumForSuite } from '../helpers/browser.js';

const SUITE = 'TanStack Query demo in Chromium';
const executablePath = chromiumForSuite(SUITE);

describe.skipIf(executablePath === undefined)(SUITE, () => {
  let demo: TanstackDemo | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  const errors: string[] = [];

  function opened(): { demo: TanstackDemo; context: BrowserContext; page: Page } {
    if (demo === undefined || context === undefined || page === undefined) throw new Error('the demo did not start');
    return { demo, context, page };
  }

  async function untilReady(): Promise<void> {
    await opened().page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
  }

  async function until(selector: string, timeout = 15_000): Promise<void> {
    await opened().page.waitForSelector(selector, { timeout, state: 'attached' });
  }

  beforeAll(async () => {
    if (executablePath === undefined) return;
    demo = await startTanstackDemo();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    context = await browser.newContext();
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // Chromium logs every failed fetch while offline ("Failed to load resource"); those are expected.
      if (message.type() === 'error' && !message.text().includes('Failed to load resource')) {
        errors.push(`console.error: ${message.text()}`);
      }
    });
    await page.goto(demo.url, { waitUntil: 'load' });
    await untilReady();
  }, 60_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await demo?.close();
  });

  it('pay offline, reload, back online: sent once, the outbox empties, the receipt comes from the handler', async () => {
    const { demo, context, page } = opened();
    const key = await page.getAttribute('#order', 'data-key');
    if (key === null || key === '') throw new Error('the page shows no order key');
    await until('#outbox[data-count="0"]');

    // 1. The browser goes offline; Pay. Stored, shown as waiting, nothing sent.
    await context.setOffline(true);
    await until('#network[data-online="false"]');
    await page.click('#pay');
    await until(`#outbox [data-op-key="${key}"][data-state="pending"]`);
    await until('#outbox[data-count="1"]');
    await until('#payment[data-state="pending"]');
    await until('#mutation[data-status="pending"]');
    expect(demo.referenceServer.ledger.requests).toHaveLength(0);

    // 2. Reload while still offline for the app (the page's switch, kept in sessionStorage: the
    //    page itself must load, so the browser's network comes back under the switch).
    await page.check('#offline');
    await context.setOffline(false);
    await page.reload({ waitUntil: 'load' });
    await untilReady();
    await until('#network[data-online="false"]');
    // The payment survived the reload; this page's mutation is a new one, idle; no receipt yet.
    await until(`#outbox [data-op-key="${key}"][data-state="pending"]`);
    await until('#payment[data-state="pending"]');
    expect(await page.getAttribute('#mutation', 'data-status')).toBe('idle');
    expect(await page.getAttribute('#receipt', 'data-key')).toBe('');
    expect(demo.referenceServer.ledger.requests).toHaveLength(0);

    // 3. Back online: sent once; the handler registered for ['pay'] shows the receipt.
    await page.uncheck('#offline');
    await until('#network[data-online="true"]');
    await until(`#receipt[data-key="${key}"]`);
    await until('#outbox[data-count="0"]');
    await until('#payment[data-state="succeeded"]');
    await until('#ledger[data-effects="1"]');
    expect(await page.textContent('#receipt')).toContain('48.00 €');
    expect(await page.getAttribute('#mutation', 'data-status')).toBe('idle');
    const outcomes = demo.referenceServer.ledger.requestsFor(key).map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'effect')).toEqual(['effect']);
    expect(outcomes.filter((o) => o !== 'effect' && o !== 'replay')).toEqual([]);
    expect(demo.referenceServer.ledger.effectCount(key)).toBe(1);
    expect(demo.referenceServer.ledger.totalEffects()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('Pay again for the same order: the same key, answered from the store, still one charge', async () => {
    const { demo, page } = opened();
    const key = await page.getAttribute('#order', 'data-key');
    if (key === null) throw new Error('the page shows no order key');
    const requests = demo.referenceServer.ledger.requests.length;
    await page.click('#pay');
    await until('#mutation[data-status="success"]');
    expect(demo.referenceServer.ledger.effectCount(key)).toBe(1);
    expect(demo.referenceServer.ledger.totalEffects()).toBe(1);
    // The key had succeeded: the answer came from IndexedDB, not the network.
    expect(demo.referenceServer.ledger.requests.length).toBe(requests);
    expect(errors).toEqual([]);
  });
});
