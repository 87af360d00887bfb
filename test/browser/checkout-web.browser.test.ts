/**
 * The checkout web demo (examples/checkout-web) clicked through in real
 * Chromium: pay once; a double click is one charge; a lost response is
 * resent with the same key and replayed; offline (the browser's and the
 * page's switch) sends nothing, and back online each payment goes out once;
 * a payment whose every answer is lost ends `unknown` and its reconcile
 * hook settles it from the server's ledger, by the reference it carries.
 * The server's ledger and the page's ledger panel show one effect per key.
 * A screenshot of the final page is saved to test-results/.
 */
import { mkdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckoutDemo, startCheckoutDemo } from '../../examples/checkout-web/server.js';
import { CHROMIUM_ARGS, chromiumForSuite } from '../helpers/browser.js';

const SUITE = 'checkout web demo in Chromium';
const executablePath = chromiumForSuite(SUITE);
const RESULTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const SCREENSHOT = `${RESULTS}checkout-web.png`;

describe.skipIf(executablePath === undefined)(SUITE, () => {
  let demo: CheckoutDemo | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  const errors: string[] = [];
  /** Keys paid so far, in order. */
  const paid: string[] = [];

  function opened(): { demo: CheckoutDemo; context: BrowserContext; page: Page } {
    if (demo === undefined || context === undefined || page === undefined) throw new Error('the demo did not start');
    return { demo, context, page };
  }

  const ledger = () => opened().demo.referenceServer.ledger;

  async function orderKey(): Promise<string> {
    const key = await opened().page.getAttribute('#order-key', 'data-key');
    if (key === null || key === '') throw new Error('the page shows no order key');
    return key;
  }

  /** Clicks "New order" and returns its key (a fresh one). */
  async function newOrder(): Promise<string> {
    const { page } = opened();
    const before = await orderKey();
    await page.click('#new-order');
    await page.waitForFunction(
      (previous) => {
        const key = document.querySelector('#order-key')?.getAttribute('data-key');
        const pay = document.querySelector<HTMLButtonElement>('#pay');
        return key !== previous && pay?.disabled === false;
      },
      before,
      { polling: 25, timeout: 5_000 },
    );
    const key = await orderKey();
    expect(key).not.toBe(before);
    return key;
  }

  /** Waits until the timeline (client.subscribe) shows `key` in `state`. */
  async function untilTimeline(key: string, state: string, timeout = 15_000): Promise<void> {
    await opened().page.waitForSelector(`#ops [data-op-key="${key}"][data-state="${state}"]`, { timeout });
  }

  /** Waits until the ledger panel (from the server) shows `key` with `effects` charges. */
  async function untilLedgerPanel(key: string, effects: number): Promise<void> {
    await opened().page.waitForSelector(`#ledger [data-ledger-key="${key}"][data-effects="${effects}"]`, {
      timeout: 10_000,
    });
  }

  /** Waits until `n` clicks on Pay for the current order have had their answer. */
  async function untilAnswered(n: number): Promise<void> {
    await opened().page.waitForSelector(`#order-status[data-answered="${n}"]`, { timeout: 15_000 });
  }

  /**
   * One charge for `key`: one `effect` in the server's ledger, any other
   * request for it a `replay`. (Chromium itself may resend a request whose
   * kept-alive socket closed under it: same headers, same key, a replay.)
   */
  function expectOneCharge(key: string): void {
    const outcomes = ledger()
      .requestsFor(key)
      .map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'effect')).toEqual(['effect']);
    expect(outcomes.filter((o) => o !== 'effect' && o !== 'replay')).toEqual([]);
    expect(ledger().effectCount(key)).toBe(1);
  }

  async function attemptClasses(key: string): Promise<string[]> {
    return opened().page.$$eval(`#ops [data-op-key="${key}"] .attempt`, (chips) =>
      chips.map((chip) => chip.getAttribute('data-class') ?? ''),
    );
  }

  beforeAll(async () => {
    if (executablePath === undefined) return;
    demo = await startCheckoutDemo();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // Chromium logs every failed fetch while offline ("Failed to load resource"); those are expected.
      if (message.type() === 'error' && !message.text().includes('Failed to load resource')) {
        errors.push(`console.error: ${message.text()}`);
      }
    });
    await page.goto(demo.url, { waitUntil: 'load' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10_000 });
    await page.waitForSelector('#leader-pill[data-state="leader"]', { timeout: 10_000 });
  }, 30_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await demo?.close();
  });

  it('1. pay once: one attempt, one charge, shown in the timeline and the ledger panel', async () => {
    const { page } = opened();
    const key = await orderKey();
    await page.click('#pay');
    await untilTimeline(key, 'succeeded');
    await untilAnswered(1);
    paid.push(key);

    expectOneCharge(key);
    // One attempt by the client.
    expect(await attemptClasses(key)).toEqual(['completed']);
    await untilLedgerPanel(key, 1);
    expect(await page.textContent('#charges')).toBe('1');
    expect(await page.textContent('#order-status')).toContain('Paid ✓');
  });

  it('2. double click on Pay: both clicks carry the order key; one operation, one attempt, one charge', async () => {
    const { page } = opened();
    const key = await newOrder();
    await page.dblclick('#pay');
    await untilTimeline(key, 'succeeded');
    await untilAnswered(2);
    paid.push(key);

    // Two clicks, one operation, one attempt, one charge.
    expect(await page.textContent('#clicks')).toBe('2');
    const row = page.locator(`#ops [data-op-key="${key}"]`);
    expect(await row.getAttribute('data-tries')).toBe('1');
    expect(await row.textContent()).toContain('2 clicks on Pay, one operation');
    expectOneCharge(key);
    const requests = ledger().requestsFor(key).length;
    await untilLedgerPanel(key, 1);
    expect(await page.textContent('#charges')).toBe('1');

    // A third click on the paid order: answered from IndexedDB, nothing sent.
    await page.click('#pay');
    await untilAnswered(3);
    expect(await page.textContent('#order-status')).toContain('no request sent');
    expect(ledger().requestsFor(key)).toHaveLength(requests);
    const log = await page.textContent('#log');
    expect(log).toContain('Pay clicked again (click 2)');
  });

  it('3. "fail next responses" (charge, then lose the response): one resend with the same key, replayed; one charge', async () => {
    const { page } = opened();
    await page.selectOption('#fail-kind', 'drop-after-commit');
    await page.fill('#fail-count', '1');
    await page.click('#fail-arm');
    await page.waitForSelector('#armed[data-armed="1"]', { timeout: 5_000 });

    const key = await newOrder();
    await page.click('#pay');
    await untilTimeline(key, 'succeeded');
    await untilAnswered(1);
    paid.push(key);

    // The server charged on attempt 1 and dropped the answer; attempt 2 (same key) got the stored one.
    expect(
      ledger()
        .requestsFor(key)
        .map((r) => [r.outcome, r.fault]),
    ).toEqual([
      ['effect', 'drop-after-commit'],
      ['replay', undefined],
    ]);
    expect(ledger().effectCount(key)).toBe(1);
    expect(await attemptClasses(key)).toEqual(['ambiguous', 'completed']);
    const row = page.locator(`#ops [data-op-key="${key}"]`);
    expect(await row.getAttribute('data-attempts')).toBe('2');
    expect(await row.textContent()).toContain('replayed by the server');
    expect(await page.textContent('#order-status')).toContain('the server replayed its stored answer');
    await untilLedgerPanel(key, 1);
    await page.waitForSelector('#armed[data-armed="0"]', { timeout: 5_000 });
  });

  /** Waits until the page's drainer has made `n` more passes than now (see `drain:pass` in page.ts). */
  async function untilMoreDrainPasses(n: number): Promise<void> {
    const { page } = opened();
    const now = Number((await page.getAttribute('body', 'data-drain-passes')) ?? '0');
    await page.waitForFunction((target) => Number(document.body.dataset.drainPasses ?? '0') >= target, now + n, {
      polling: 50,
      timeout: 10_000,
    });
  }

  it('4. offline (browser and page switch): two payments wait, nothing reaches the server; back online both go once', async () => {
    const { page, context } = opened();
    const requestsBefore = ledger().requests.length;

    await context.setOffline(true);
    await page.check('#offline');
    await page.waitForSelector('#net-pill[data-state="offline"]', { timeout: 5_000 });

    const first = await newOrder();
    await page.click('#pay');
    const second = await newOrder();
    await page.click('#pay');
    await untilTimeline(first, 'pending');
    await untilTimeline(second, 'pending');
    // Two drain passes go by while offline: each had its chance to send, and none did.
    await untilMoreDrainPasses(2);
    expect(ledger().requests).toHaveLength(requestsBefore);
    for (const key of [first, second]) {
      const row = page.locator(`#ops [data-op-key="${key}"]`);
      expect(await row.getAttribute('data-state')).toBe('pending');
      expect(await row.getAttribute('data-tries')).toBe('0');
      expect(await row.textContent()).toContain('waiting for the network');
    }

    // The browser is back, the page's switch still says offline: still nothing goes out.
    await context.setOffline(false);
    await page.waitForSelector('#net-pill[data-state="offline"]', { timeout: 5_000 });
    expect(await page.textContent('#net-pill')).toContain('simulated');
    await untilMoreDrainPasses(2);
    expect(ledger().requests).toHaveLength(requestsBefore);
    expect(await page.locator(`#ops [data-op-key="${first}"]`).getAttribute('data-state')).toBe('pending');

    // Switch off: both are sent, once each.
    await page.uncheck('#offline');
    await untilTimeline(first, 'succeeded');
    await untilTimeline(second, 'succeeded');
    paid.push(first, second);
    for (const key of [first, second]) {
      expectOneCharge(key);
      // The time offline cost no attempt: one each, once back online.
      expect(await attemptClasses(key)).toEqual(['completed']);
      await untilLedgerPanel(key, 1);
    }
  });

  it('5. "force an unknown outcome": every answer lost after the charge, the client ends unknown, its reconcile hook finds the charge by reference; one charge', async () => {
    const { page } = opened();
    await page.click('#force-unknown');
    // One armed failure per attempt the policy allows (DEMO_POLICY.maxAttempts).
    await page.waitForSelector('#armed[data-armed="6"]', { timeout: 5_000 });

    const key = await newOrder();
    await page.click('#pay');
    // Six attempts of 1 s each (attemptTimeoutMs) and their backoff.
    await untilTimeline(key, 'succeeded', 30_000);
    await untilAnswered(1);
    paid.push(key);

    // Six attempts, each answer dropped: charged by the first, replayed to the others, never heard.
    const requests = ledger().requestsFor(key);
    expect(requests.map((r) => [r.outcome, r.fault])).toEqual([
      ['effect', 'drop-after-commit'],
      ...Array.from({ length: 5 }, () => ['replay', 'drop-after-commit']),
    ]);
    expectOneCharge(key);
    expect(await attemptClasses(key)).toEqual(Array.from({ length: 6 }, () => 'ambiguous'));
    // Settled by the hook, not by an answer: the stored record says so (`result.reconciled`, read with
    // client.get), and the page shows the charge the hook found.
    const row = page.locator(`#ops [data-op-key="${key}"]`);
    await page.waitForSelector(`#ops [data-op-key="${key}"] [data-reconciled="true"]`, { timeout: 5_000 });
    expect(await row.textContent()).toMatch(/reconciled by its hook \(reference [0-9a-f]{8}-10\d\d\)/);
    const status = (await page.textContent('#order-status')) ?? '';
    expect(status).toMatch(
      /Paid ✓ charge res_\d+ \(every answer was lost; the reconcile hook found the charge by its reference/,
    );
    const log = (await page.textContent('#log')) ?? '';
    expect(log).toContain('reconcile hook (ledger by reference): applied → succeeded');
    await untilLedgerPanel(key, 1);
    await page.waitForSelector('#armed[data-armed="0"]', { timeout: 5_000 });
  });

  it('6. the proof: one effect per key on the server and in the ledger panel; the timeline shows the states; screenshot', async () => {
    const { page } = opened();
    expect(paid).toHaveLength(6);
    expect(new Set(paid).size).toBe(6);
    for (const key of paid) expect(ledger().effectCount(key)).toBe(1);
    expect(ledger().totalEffects()).toBe(6);
    expect([...ledger().effects.keys()].sort()).toEqual([...paid].sort());

    const panel = await page.$$eval('#ledger [data-ledger-key]', (rows) =>
      rows.map((row) => [row.getAttribute('data-ledger-key'), Number(row.getAttribute('data-effects'))] as const),
    );
    expect(new Map(panel)).toEqual(new Map(paid.map((key) => [key, 1])));
    expect(await page.getAttribute('#ledger-summary', 'data-ok')).toBe('true');
    expect(await page.textContent('#ledger-summary')).toContain('every key charged exactly once');

    const timeline = await page.$$eval('#ops [data-op-key]', (rows) =>
      rows.map((row) => [row.getAttribute('data-op-key'), row.getAttribute('data-state')] as const),
    );
    expect(new Map(timeline)).toEqual(new Map(paid.map((key) => [key, 'succeeded'])));
    // The transitions the log went through, from the snapshots.
    const log = (await page.textContent('#log')) ?? '';
    for (const text of ['written ahead to IndexedDB', 'waiting for the network', 'pending → ', '→ succeeded']) {
      expect(log).toContain(text);
    }
    expect(log).toContain('ambiguous');

    await mkdir(RESULTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect((await stat(SCREENSHOT)).size).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});
