/**
 * A payment app guarded by `oncely/server`, served on a real socket in either
 * style (a Fetch handler, or Connect middleware in a `node:http` chain),
 * with a ledger of effects, an injected clock and a way to hold a payment
 * mid-handler. The body scripts the handler: `{ "respond": 500 }` answers
 * that status, `{ "throw": true }` throws after the effect.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AbandonedClaim, type IdempotencyOptions, type IdempotencyStore, idempotency } from '../../src/server.js';
import { serveChain, serveFetch, type TestServer } from '../helpers/http-server.js';

export type Style = 'fetch' | 'connect';

export interface Effect {
  n: number;
  path: string;
  account: string;
  body: Record<string, unknown>;
}

export interface Gate {
  arrived: Promise<void>;
  release(): void;
}

export interface App extends TestServer {
  effects: Effect[];
  abandoned: AbandonedClaim[];
  /** Moves the store's time on by `ms` (leases and retention). */
  advance(ms: number): Promise<void>;
  /** The next payment that reaches the handler waits (after its effect) until released. */
  hold(): Gate;
  sweep(): Promise<number>;
}

export const ROUTES: IdempotencyOptions['routes'] = {
  'POST /payments': {},
  'POST /payments/*/refunds': { replay: 'deterministic' },
  'POST /deterministic': { replay: 'deterministic' },
  'POST /success-only': { replay: 'success-only' },
  'POST /safe': { rerun: 'safe' },
  'POST /short': { retentionMs: 1_000 },
  'POST /optional': { requireKey: false },
};

export async function startApp<Tx>(
  style: Style,
  options: {
    store: IdempotencyStore<Tx>;
    advance: (ms: number) => Promise<void>;
    extra?: Partial<IdempotencyOptions<Tx>>;
  },
): Promise<App> {
  const effects: Effect[] = [];
  const abandoned: AbandonedClaim[] = [];
  const holds: { arrive: () => void; gate: Promise<void> }[] = [];
  const guard = idempotency<Tx>({
    store: options.store,
    scopeOf: (request) => request.headers.get('x-account') ?? 'anonymous',
    routes: ROUTES,
    leaseMs: 10_000,
    // Lease renewals never fire unless a test gives its own schedule: a held handler stands for
    // a process that died after its effect (nothing renews its claim).
    schedule: () => () => undefined,
    onAbandoned: (claim) => {
      abandoned.push(claim);
    },
    ...options.extra,
  });

  /** The business: one effect, then the scripted answer. */
  async function pay(path: string, account: string, body: Record<string, unknown>) {
    const n = effects.length + 1;
    effects.push({ n, path, account, body });
    // As a process that died after its effect: no answer, ever (the socket closes with the server).
    if (body.stall === true) await new Promise<never>(() => undefined);
    const hold = holds.shift();
    if (hold !== undefined) {
      hold.arrive();
      await hold.gate;
    }
    if (body.throw === true) throw new Error('the handler failed after its effect');
    const status = typeof body.respond === 'number' ? body.respond : 201;
    return {
      status,
      headers: {
        'Content-Type': 'application/json',
        Location: `/payments/pay_${n}`,
        'X-Internal': `secret-${n}`,
        'Set-Cookie': `session=${n}`,
      },
      body: JSON.stringify({ id: `pay_${n}`, amount: body.amount ?? null, status }),
    };
  }

  let server: TestServer;
  if (style === 'fetch') {
    server = await serveFetch(
      guard.wrap(async (request) => {
        const text = await request.text();
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // not JSON: the payment has no script
        }
        const answer = await pay(new URL(request.url).pathname, request.headers.get('x-account') ?? 'anonymous', body);
        return new Response(answer.body, { status: answer.status, headers: answer.headers });
      }),
    );
  } else {
    const app = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (e?: unknown) => void) => {
      const body = (req.body instanceof Uint8Array ? {} : (req.body ?? {})) as Record<string, unknown>;
      const account = (req.headers['x-account'] as string | undefined) ?? 'anonymous';
      pay(new URL(req.url ?? '/', 'http://x').pathname, account, body).then(
        (answer) => {
          res.writeHead(answer.status, answer.headers);
          res.write(answer.body.slice(0, 5));
          res.end(answer.body.slice(5));
        },
        (error: unknown) => next(error),
      );
    };
    server = await serveChain(guard.middleware as never, app as never);
  }
  return {
    ...server,
    effects,
    abandoned,
    advance: options.advance,
    hold() {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((r) => {
        arrive = r;
      });
      const gate = new Promise<void>((r) => {
        release = r;
      });
      holds.push({ arrive, gate });
      return { arrived, release };
    },
    sweep: () => guard.sweep(),
  };
}

export interface Sent {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

/** One request; `key` undefined sends none, a string is sent as given (bare or "quoted"). */
export async function post(
  app: { url: string },
  path: string,
  options: { key?: string; body?: string | object; account?: string; contentType?: string } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { 'Content-Type': options.contentType ?? 'application/json' };
  if (options.key !== undefined) headers['Idempotency-Key'] = options.key;
  if (options.account !== undefined) headers['X-Account'] = options.account;
  const body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body ?? { amount: 100 });
  const response = await fetch(`${app.url}${path}`, { method: 'POST', headers, body });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the test reads `text`
  }
  return { status: response.status, headers: response.headers, text, json };
}
