/**
 * The IndexedDB store in real Chromium against real IndexedDB: the shared
 * store contract, strict durability, and atomic updates across two tabs.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { sampleRecord, storeContract } from '../../src/store/contract.js';
import { chromiumForSuite } from '../helpers/browser.js';
import { useBrowserSuite } from '../helpers/browser-suite.js';
import type { ContractReport, CounterReport, IncrementOptions, IncrementWindow } from './indexeddb-store.page.js';

const SUITE = 'indexedDbStore in Chromium';
const executablePath = chromiumForSuite(SUITE);

/** The contract as the page runs it: reopen and corrupt enabled. */
const expectedCases = storeContract({
  create: () => {
    throw new Error('names only');
  },
  reopen: (store) => store,
  corrupt: () => undefined,
}).map((c) => c.name);

describe.skipIf(executablePath === undefined)(SUITE, () => {
  const { started, context } = useBrowserSuite(executablePath, {
    entry: fileURLToPath(new URL('./indexeddb-store.page.ts', import.meta.url)),
  });

  function runContract(page: Page): Promise<ContractReport> {
    return page.evaluate(() => {
      if (window.oncely === undefined) throw new Error('page harness missing');
      return window.oncely.runContract();
    });
  }

  it('passes every case of the shared store contract against real IndexedDB', async () => {
    const page = await started().openPage(await context());
    const report = await runContract(page);
    const failed = report.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`);
    expect(failed).toEqual([]);
    expect(report.results.map((r) => r.name)).toEqual(expectedCases);
    expect(report.results.length).toBeGreaterThanOrEqual(12);
    expect(started().errors(page)).toEqual([]);

    // Every readwrite transaction the store opened asked for, and got, strict durability.
    expect(report.durabilitySupported).toBe(true);
    expect(report.readwrite).toBeGreaterThan(20);
    expect(report.strict).toBe(report.readwrite);
  });

  it('two tabs each run 50 concurrent increments on one key: all 100 land', async () => {
    const ctx = await context();
    const [a, b] = await Promise.all([started().openPage(ctx), started().openPage(ctx)]);
    if (a === undefined || b === undefined) throw new Error('pages did not open');
    const name = 'two-tabs';
    const key = sampleRecord('counter').key;
    await a.evaluate(([n, k]) => window.oncely?.seed(n, k), [name, key] as const);

    const startAt = Date.now() + 500;
    const run = (page: Page, tab: string) =>
      page.evaluate((options: IncrementOptions) => window.oncely?.increment(options), {
        name,
        key,
        tab,
        count: 50,
        startAt,
      }) as Promise<IncrementWindow | undefined>;
    const [windowA, windowB] = await Promise.all([run(a, 'A'), run(b, 'B')]);
    if (windowA === undefined || windowB === undefined) throw new Error('increments did not run');
    // The premise: both tabs' updates were in flight at the same time (else this proves nothing).
    expect(windowA.issuedAt).toBeLessThan(windowB.doneAt);
    expect(windowB.issuedAt).toBeLessThan(windowA.doneAt);

    const seen = (page: Page) =>
      page.evaluate(([n, k]) => window.oncely?.read(n, k), [name, key] as const) as Promise<CounterReport | undefined>;
    const [fromA, fromB] = await Promise.all([seen(a), seen(b)]);
    expect(fromA?.epoch).toBe(100);
    expect(fromB).toEqual(fromA);
    const order = fromA?.order ?? '';
    expect(order).toHaveLength(100);
    expect(order.replace(/B/g, '')).toHaveLength(50);
    expect(order.replace(/A/g, '')).toHaveLength(50);
    const switches = [...order].filter((tab, i) => i > 0 && tab !== order[i - 1]).length;
    console.info(`two tabs: commit order ${order} (${switches} switches between tabs)`);
    expect([...started().errors(a), ...started().errors(b)]).toEqual([]);
  });
});
