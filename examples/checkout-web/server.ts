/**
 * The checkout demo's servers, started in-process by `main.ts` (for
 * `npm run demo:web`) and by the browser test:
 *
 * - the reference idempotent server (`oncely/testing`): the payment API,
 *   with its ledger and scripted faults. The page pays it directly,
 *   cross-origin (CORS preflight and all), as a real app pays its API;
 * - a small static server for the page: `index.html`, `styles.css`,
 *   `app.js` — `page.ts` bundled with esbuild at start-up, importing
 *   `oncely/browser` like any app would — and `sw.js`, its service worker
 *   (`sw.ts`, registered by the page opened with `?sw=1`);
 * - the page's control endpoints on that same origin: `GET /config.json`,
 *   `POST /control/fail` (arms faults on the reference server with
 *   `server.script(...)`), `GET /control/ledger` (the proof) and
 *   `GET /control/payments?reference=…` (the payments charged, looked up
 *   by the reference stamped into them: what the page's reconcile hook asks).
 *
 * Both listen on 127.0.0.1 only.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { type Fault, type ReferenceServer, startReferenceServer } from 'oncely/testing';
import { bundleForBrowser, pageFiles, sendJson, startPageServer } from '../web-demo/page-server.js';
import { DEMO_POLICY } from './policy.js';
import {
  type DemoConfig,
  type FailureKind,
  isFailureKind,
  type LedgerView,
  MAX_FAILURES,
  PAYMENTS_LOOKUP_PATH,
  PAYMENTS_PATH,
  type PaymentLookup,
} from './protocol.js';

export interface CheckoutDemoOptions {
  /** The page's port on 127.0.0.1. @default 0 (the OS picks a free one) */
  port?: number;
}

export interface CheckoutDemo {
  /** The page, e.g. `http://127.0.0.1:4300/`. */
  url: string;
  /** The payment API the page pays through; its `ledger` is the proof. */
  referenceServer: ReferenceServer;
  /** Stops both servers. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024;

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

/** The faults one armed failure of `kind` stands for. */
function faultsFor(kind: FailureKind): Fault[] {
  const match = { method: 'POST', path: PAYMENTS_PATH };
  if (kind === 'status-503') return [{ kind: 'status', status: 503, retryAfter: 1, match }];
  // Every attempt the policy allows is charged (or replayed) and its answer lost: the client ends `unknown`.
  // Dropped, not reset: a browser resends a POST on its own after a reset of a kept-alive socket, which would
  // spend one of these on a request the client never made.
  if (kind === 'unknown') {
    return Array.from({ length: DEMO_POLICY.maxAttempts ?? 5 }, () => ({ kind: 'drop-after-commit', match }));
  }
  return [{ kind, match }];
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new Error('body is not JSON'));
      }
    });
  });
}

export async function startCheckoutDemo(options: CheckoutDemoOptions = {}): Promise<CheckoutDemo> {
  const [script, worker] = await Promise.all([
    bundleForBrowser(here('./page.ts')),
    // The page's service worker (registered by the page opened with `?sw=1`): a classic script.
    bundleForBrowser(here('./sw.ts'), { format: 'iife' }),
  ]);
  const files = await pageFiles(new URL('./', import.meta.url), script);
  files['/sw.js'] = { body: worker, type: 'text/javascript; charset=utf-8' };

  /** The payments charged, by the reference their body carries (`reference`): the provider's search. */
  const payments = new Map<string, { id: string } & Record<string, unknown>>();
  const referenceServer = await startReferenceServer({
    // The reference server's own default (201, the body under a fresh id), remembered by reference.
    handle: (req) => {
      const fields = typeof req.body === 'object' && req.body !== null ? (req.body as Record<string, unknown>) : {};
      const payment = { id: `res_${req.effectNumber}`, ...fields };
      if (typeof fields.reference === 'string') payments.set(fields.reference, payment);
      return { status: 201, body: payment };
    },
  });
  const config: DemoConfig = { api: referenceServer.url, run: randomUUID().slice(0, 8) };
  let scripted = 0;

  function ledgerView(): LedgerView {
    const { ledger } = referenceServer;
    const byKey = new Map<string, LedgerView['keys'][number]>();
    let faulted = 0;
    for (const entry of ledger.requests) {
      if (entry.fault !== undefined) faulted++;
      if (entry.key === undefined) continue;
      let row = byKey.get(entry.key);
      if (row === undefined) {
        row = { key: entry.key, effects: ledger.effectCount(entry.key), requests: [] };
        byKey.set(entry.key, row);
      }
      row.requests.push({ at: entry.at, outcome: entry.outcome, status: entry.status, fault: entry.fault });
    }
    return {
      keys: [...byKey.values()],
      totalEffects: ledger.totalEffects(),
      requests: ledger.requests.length,
      armed: Math.max(0, scripted - faulted),
    };
  }

  async function fail(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readJson(req)) as { kind?: unknown; count?: unknown } | null;
    const kind = body?.kind;
    const count = body?.count;
    if (!isFailureKind(kind)) {
      sendJson(res, 400, { error: 'kind: unknown failure' });
      return;
    }
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_FAILURES) {
      sendJson(res, 400, { error: `count: must be an integer from 1 to ${MAX_FAILURES}` });
      return;
    }
    const faults = Array.from({ length: count }, () => faultsFor(kind)).flat();
    referenceServer.script(...faults);
    scripted += faults.length;
    sendJson(res, 200, ledgerView());
  }

  const page = await startPageServer({
    port: options.port ?? 0,
    files,
    json: {
      '/config.json': () => config,
      '/control/ledger': ledgerView,
      [PAYMENTS_LOOKUP_PATH]: (url): PaymentLookup => {
        const payment = payments.get(url.searchParams.get('reference') ?? '');
        return payment === undefined ? { found: false } : { found: true, payment };
      },
    },
    async control(req, res, path) {
      if (path !== '/control/fail') return false;
      if (req.method !== 'POST') sendJson(res, 405, { error: 'POST only' });
      else await fail(req, res);
      return true;
    },
    closeBackend: () => referenceServer.close(),
  });
  return { url: page.url, referenceServer, close: page.close };
}
