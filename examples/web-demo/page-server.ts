/**
 * What the two browser demos (`checkout-web`, `tanstack-query`) share: the
 * page bundled with esbuild at start-up (importing oncely from `dist/` like
 * any app), a small static server on 127.0.0.1 with the demo's own JSON and
 * control routes, and the start-up and shutdown of it beside the reference
 * server. Each demo keeps what is its own: its files, routes and ledger view.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';

export interface StaticFile {
  body: string;
  type: string;
}

export interface BundleOptions {
  /** `esm` for a page's module script, `iife` for a classic script (a service worker). @default 'esm' */
  format?: 'esm' | 'iife';
  /** Minify and build React and friends for production. @default false (an inline source map instead) */
  production?: boolean;
}

/** One entry → one script for the browser. Needs `npm run build` (the entry imports oncely from `dist/`). */
export async function bundleForBrowser(entryPath: string, options: BundleOptions = {}): Promise<string> {
  try {
    const result = await build({
      entryPoints: [entryPath],
      bundle: true,
      format: options.format ?? 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      ...(options.production
        ? { minify: true, define: { 'process.env.NODE_ENV': '"production"' } }
        : { sourcemap: 'inline' as const }),
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

/**
 * A demo page's files: `index.html` and `styles.css` read from `dir` (the
 * demo's folder, as a `file:` URL ending in `/`), and its bundled `app.js`.
 */
export async function pageFiles(dir: URL, script: string): Promise<Record<string, StaticFile>> {
  const [html, css] = await Promise.all([
    readFile(new URL('index.html', dir), 'utf8'),
    readFile(new URL('styles.css', dir), 'utf8'),
  ]);
  return {
    '/': { body: html, type: 'text/html; charset=utf-8' },
    '/index.html': { body: html, type: 'text/html; charset=utf-8' },
    '/styles.css': { body: css, type: 'text/css; charset=utf-8' },
    '/app.js': { body: script, type: 'text/javascript; charset=utf-8' },
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

export interface PageServerOptions {
  /** The page's port on 127.0.0.1; 0 lets the OS pick a free one. */
  port: number;
  /** Served as they are for GET and HEAD, by path. */
  files: Record<string, StaticFile>;
  /** `GET` routes answered with JSON, by path: the value is computed per request. */
  json: Record<string, (url: URL) => unknown>;
  /**
   * Sees every request first, whatever its method; answers it and returns
   * true, or returns false to leave it to `json` and `files`. A rejection
   * answers 400 with its message.
   */
  control?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;
  /** Stops what the page talks to (the reference server): on close, and when listening fails. */
  closeBackend(): Promise<void>;
}

export interface PageServer {
  /** The page, e.g. `http://127.0.0.1:4300/`. */
  url: string;
  /** Stops the page's server, then the backend. Safe to call twice. */
  close(): Promise<void>;
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

export async function startPageServer(options: PageServerOptions): Promise<PageServer> {
  const { files, json, control } = options;

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    if (control !== undefined && (await control(req, res, url.pathname))) return;
    if (method !== 'GET' && method !== 'HEAD') {
      sendJson(res, 405, { error: 'GET only' });
      return;
    }
    const answer = Object.hasOwn(json, url.pathname) ? json[url.pathname] : undefined;
    if (answer !== undefined) {
      sendJson(res, 200, answer(url));
      return;
    }
    const file = Object.hasOwn(files, url.pathname) ? files[url.pathname] : undefined;
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' });
    res.end(method === 'HEAD' ? undefined : file.body);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 400, { error: error instanceof Error ? error.message : String(error) });
      else res.destroy();
    });
  });
  let port: number;
  try {
    port = await listen(server, options.port);
  } catch (error) {
    await options.closeBackend();
    throw error;
  }

  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/`,
    close() {
      closed ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await options.closeBackend();
      })();
      return closed;
    },
  };
}
