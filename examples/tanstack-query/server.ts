/**
 * The TanStack Query demo's servers, started in-process by `main.ts` and by
 * the browser test: the reference idempotent server (`oncely/testing`, the
 * payment API and its ledger), and a small static server for the page:
 * `index.html`, `styles.css`, `app.js` (`page.ts` bundled with esbuild at
 * start-up, importing `oncely/browser`, `oncely/tanstack-query` and
 * `@tanstack/react-query` like any app), `GET /config.json` and
 * `GET /control/ledger`. Both listen on 127.0.0.1 only.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type ReferenceServer, startReferenceServer } from 'oncely/testing';
import type { DemoConfig, LedgerView } from './protocol.js';

export interface TanstackDemoOptions {
  /** The page's port on 127.0.0.1. @default 0 (the OS picks a free one) */
  port?: number;
}

export interface TanstackDemo {
  /** The page, e.g. `http://127.0.0.1:4310/`. */
  url: string;
  /** The payment API the page pays through; its `ledger` is the proof. */
  referenceServer: ReferenceServer;
  /** Stops both servers. */
  close(): Promise<void>;
}

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

/** `page.ts` → one ES module for the browser. Needs `npm run build` (it imports oncely from dist/). */
async function bundlePage(): Promise<string> {
  try {
    const result = await build({
      entryPoints: [here('./page.ts')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      minify: true,
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    const output = result.outputFiles[0];
    if (output === undefined) throw new Error('esbuild produced no output');
    return output.text;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`Could not bundle the page (run \`npm run build\` first?): ${detail}`);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function listen(server: ReturnType<typeof createServer>, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startTanstackDemo(options: TanstackDemoOptions = {}): Promise<TanstackDemo> {
  const [script, html, css] = await Promise.all([
    bundlePage(),
    readFile(here('./index.html'), 'utf8'),
    readFile(here('./styles.css'), 'utf8'),
  ]);
  const files: Record<string, { body: string; type: string }> = {
    '/': { body: html, type: 'text/html; charset=utf-8' },
    '/index.html': { body: html, type: 'text/html; charset=utf-8' },
    '/styles.css': { body: css, type: 'text/css; charset=utf-8' },
    '/app.js': { body: script, type: 'text/javascript; charset=utf-8' },
  };
  const referenceServer = await startReferenceServer();
  const config: DemoConfig = { api: referenceServer.url, run: randomUUID().slice(0, 8) };

  function ledgerView(): LedgerView {
    const { ledger } = referenceServer;
    const effects: Record<string, number> = {};
    for (const entry of ledger.requests) {
      if (entry.key !== undefined) effects[entry.key] = ledger.effectCount(entry.key);
    }
    return { effects, totalEffects: ledger.totalEffects(), requests: ledger.requests.length };
  }

  function route(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      sendJson(res, 405, { error: 'GET only' });
      return;
    }
    if (path === '/config.json') {
      sendJson(res, 200, config);
      return;
    }
    if (path === '/control/ledger') {
      sendJson(res, 200, ledgerView());
      return;
    }
    const file = Object.hasOwn(files, path) ? files[path] : undefined;
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' });
    res.end(method === 'HEAD' ? undefined : file.body);
  }

  const server = createServer(route);
  let port: number;
  try {
    port = await listen(server, options.port ?? 0);
  } catch (error) {
    await referenceServer.close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/`,
    referenceServer,
    close() {
      closed ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await referenceServer.close();
      })();
      return closed;
    },
  };
}
