/**
 * The checkout demo with its service worker (`?sw=1`) in real Chromium: a
 * payment made offline, every page closed, the network back: the worker
 * sends it (Chromium fires Background Sync by itself), once; a page opened
 * afterwards shows it paid, its attempt labelled "sent by the service
 * worker".
 */
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckoutDemo, startCheckoutDemo } from '../../examples/checkout-web/server.js';
import { CHROMIUM_ARGS, chromiumForSuite } from '../helpers/browser.js';

const SUITE = 'checkout web demo with its service worker in Chromium';
const executablePath = chromiumForSuite(SUITE);

describe.skipIf(executablePath === undefined)(SUITE, () => {
  let demo: CheckoutDemo | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (executablePath === undefined) return;
    demo = await startCheckoutDemo();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  }, 30_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await demo?.close();
  });

  it('an offline payment goes out through the worker with every tab closed, once', async () => {
    if (demo === undefined || browser === undefined) throw new Error('the demo did not start');
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${demo.url}?sw=1`, { waitUntil: 'load' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
    // The worker controls the page (it claims its clients on activation).
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, { timeout: 10_000 });
    const key = await page.getAttribute('#order-key', 'data-key');
    if (key === null) throw new Error('no order key');

    await context.setOffline(true);
    await page.click('#pay');
    await page.waitForSelector(`#ops [data-op-key="${key}"][data-state="pending"]`, { timeout: 10_000 });
    // The page asks for a Background Sync asynchronously (once its worker is ready): closed before the
    // browser holds the tag, nothing would wake the worker.
    await page.waitForFunction(
      async () => {
        const registration = (await navigator.serviceWorker.ready) as ServiceWorkerRegistration & {
          sync?: { getTags(): Promise<string[]> };
        };
        return ((await registration.sync?.getTags()) ?? []).some((tag) => tag.startsWith('oncely:'));
      },
      undefined,
      { polling: 25, timeout: 10_000 },
    );
    await page.close();
    expect(demo.referenceServer.ledger.requestsFor(key)).toEqual([]);

    // Back online with no page of the app open (an about:blank one keeps the browser's context in use, as a user's
    // other tabs would): Chromium fires the worker's sync, which sends the payment.
    const blank = await context.newPage();
    await context.setOffline(false);
    const deadline = Date.now() + 15_000;
    while (demo.referenceServer.ledger.effectCount(key) === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(demo.referenceServer.ledger.effectCount(key)).toBe(1);

    const later = await context.newPage();
    await later.goto(demo.url, { waitUntil: 'load' });
    await later.waitForSelector(`#ops [data-op-key="${key}"][data-state="succeeded"]`, { timeout: 10_000 });
    const chip = later.locator(`#ops [data-op-key="${key}"] .attempt[data-by="worker"]`);
    await chip.first().waitFor({ timeout: 10_000 });
    expect(await chip.first().textContent()).toContain('sent by the service worker');
    expect(demo.referenceServer.ledger.effectCount(key)).toBe(1);
    await blank.close();
    await context.close();
  }, 60_000);
});
