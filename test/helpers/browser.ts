/**
 * Real-browser test harness: Debian's Chromium driven by playwright-core.
 *
 * - `chromiumForSuite(name)` finds the executable; when there is none it
 *   throws under CI (`CI` set, e.g. `CI=true`: the suite must not pass by skipping) and
 *   otherwise warns loudly and returns undefined (use with `describe.skipIf`).
 * - `startHarness({ entry })` bundles a TypeScript page script for the
 *   browser with esbuild, serves it from a tiny `node:http` server on
 *   127.0.0.1 (one origin, so pages share IndexedDB, locks and storage), and
 *   launches Chromium. `withBrowser` wraps start and close around a function.
 * - `harness.openPage(context)` loads the page and fails on any page error,
 *   so a broken bundle never passes silently.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Where Chromium lives on the machines we run on (`CHROMIUM_PATH` wins). */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** The Chromium executable, or undefined when none is installed. */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  candidates: readonly string[] = CHROMIUM_CANDIDATES,
): string | undefined {
  const fromEnv = env.CHROMIUM_PATH;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv} does not exist`);
    return fromEnv;
  }
  return candidates.find((path) => existsSync(path));
}

/** True when `CI` is set to anything but empty, `false` or `0` (CI services set `CI=true`; `.ci/run` does too). */
function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * The executable for a browser suite. Missing Chromium fails the suite in CI
 * and skips it (with a loud warning) elsewhere.
 */
export function chromiumForSuite(
  suite: string,
  env: NodeJS.ProcessEnv = process.env,
  candidates: readonly string[] = CHROMIUM_CANDIDATES,
): string | undefined {
  const path = findChromium(env, candidates);
  if (path !== undefined) return path;
  const message =
    `Chromium not found (tried CHROMIUM_PATH, ${candidates.join(', ')}). ` +
    `Install it (Debian: apt-get install chromium) or set CHROMIUM_PATH.`;
  if (isCi(env)) throw new Error(`${suite}: ${message} Browser tests must run in CI (CI=${env.CI}).`);
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING browser suite "${suite}"\n!! ${message}\n${bar}\n`);
  return undefined;
}

/**
 * Bundles `entry` (a TypeScript file) into one ES module for the browser, or
 * one classic script (`iife`: a service worker, where `import()` is not allowed).
 */
export async function bundleForBrowser(entry: string, format: 'esm' | 'iife' = 'esm'): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format,
    platform: 'browser',
    target: 'es2022',
    write: false,
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error(`esbuild produced nothing for ${entry}`);
  return output.text;
}

export interface StaticFile {
  body: string;
  type: string;
}

export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/** Serves `files` (path → content) on 127.0.0.1; anything else is a 404. */
export async function serveStatic(files: Readonly<Record<string, StaticFile>>): Promise<StaticServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const file = Object.hasOwn(files, path) ? files[path] : undefined;
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface HarnessOptions {
  /** The page script (TypeScript), bundled and loaded as a module by `/`. */
  entry: string;
  /** The Chromium executable, from `chromiumForSuite` or `findChromium`. */
  executablePath: string;
  /** More scripts served from the same origin, path → TypeScript entry, each bundled as a classic script (service workers). */
  workers?: Readonly<Record<string, string>>;
}

export interface BrowserHarness {
  browser: Browser;
  /** The origin serving the page. */
  url: string;
  /** A fresh context: its own storage (IndexedDB, caches), like a new profile. */
  newContext(): Promise<BrowserContext>;
  /**
   * Opens the page in `context` and waits for its script; rejects on any page error.
   * `path` (default `/`) may carry a query string for the page script to read.
   */
  openPage(context: BrowserContext, path?: string): Promise<Page>;
  /** Errors the page has thrown so far (uncaught exceptions and console errors). */
  errors(page: Page): string[];
  close(): Promise<void>;
}

const PAGE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>oncely browser test</title></head>
<body><script type="module" src="/page.js"></script></body></html>`;

export async function startHarness(options: HarnessOptions): Promise<BrowserHarness> {
  const script = await bundleForBrowser(options.entry);
  const workers: Record<string, StaticFile> = {};
  for (const [path, entry] of Object.entries(options.workers ?? {})) {
    workers[path] = { body: await bundleForBrowser(entry, 'iife'), type: 'text/javascript; charset=utf-8' };
  }
  const server = await serveStatic({
    ...workers,
    '/': { body: PAGE_HTML, type: 'text/html; charset=utf-8' },
    '/page.js': { body: script, type: 'text/javascript; charset=utf-8' },
  });
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: options.executablePath, args: CHROMIUM_ARGS });
  } catch (error) {
    await server.close();
    throw error;
  }
  const pageErrors = new WeakMap<Page, string[]>();
  return {
    browser,
    url: server.url,
    newContext: () => browser.newContext(),
    async openPage(context, path = '/') {
      const page = await context.newPage();
      const errors: string[] = [];
      pageErrors.set(page, errors);
      page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console.error: ${message.text()}`);
      });
      // 'load' fires after module scripts have run (they are deferred).
      await page.goto(`${server.url}${path}`, { waitUntil: 'load' });
      if (errors.length > 0) throw new Error(`the page failed to load:\n${errors.join('\n')}`);
      return page;
    },
    errors: (page) => [...(pageErrors.get(page) ?? [])],
    async close() {
      await browser.close().catch(() => undefined);
      await server.close();
    },
  };
}

/** Starts a harness, runs `fn`, and always closes it. */
export async function withBrowser<T>(options: HarnessOptions, fn: (harness: BrowserHarness) => Promise<T>): Promise<T> {
  const harness = await startHarness(options);
  try {
    return await fn(harness);
  } finally {
    await harness.close();
  }
}
