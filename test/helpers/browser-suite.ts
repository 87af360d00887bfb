/**
 * What every real-Chromium suite sets up around its tests: one harness (the
 * page, its workers and a browser) for the suite, browser contexts and
 * reference servers made per test and closed after it, whatever the test did.
 * Call it at the top of a `describe`; it registers the hooks itself.
 */
import type { BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from '../../src/testing.js';
import { type BrowserHarness, type HarnessOptions, startHarness } from './browser.js';

export interface BrowserSuite {
  /** The suite's harness; throws if it did not start. */
  started(): BrowserHarness;
  /** A fresh context (its own IndexedDB, like a new profile), closed after the test. */
  context(): Promise<BrowserContext>;
  /** A reference server for the API, closed after the test. */
  server(options?: ReferenceServerOptions): Promise<ReferenceServer>;
  /** A database name no other test of this suite uses (each test is an app of its own). */
  database(prefix: string): string;
}

/** `executablePath` from `chromiumForSuite`: undefined when the suite is skipped, and nothing starts. */
export function useBrowserSuite(
  executablePath: string | undefined,
  options: Omit<HarnessOptions, 'executablePath'>,
): BrowserSuite {
  let harness: BrowserHarness | undefined;
  const contexts: BrowserContext[] = [];
  const servers: ReferenceServer[] = [];
  let databases = 0;

  beforeAll(async () => {
    if (executablePath === undefined) return;
    harness = await startHarness({ ...options, executablePath });
  }, 30_000);

  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => undefined)));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  afterAll(async () => {
    await harness?.close();
  });

  const started = (): BrowserHarness => {
    if (harness === undefined) throw new Error('harness did not start');
    return harness;
  };
  return {
    started,
    async context() {
      const c = await started().newContext();
      contexts.push(c);
      return c;
    },
    async server(serverOptions = {}) {
      const s = await startReferenceServer(serverOptions);
      servers.push(s);
      return s;
    },
    database: (prefix) => `${prefix}-${Date.now()}-${++databases}`,
  };
}
