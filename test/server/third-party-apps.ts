/**
 * One payment route in Express, guarded three ways, for the conformance
 * kit: `express-idempotency` (its middleware, in-memory adapter, as its
 * README sets it up), `@node-idempotency/core` (its `Idempotency` with the
 * HTTP mapping of `@node-idempotency/shared`, as its NestJS interceptor
 * uses them: the project ships no Express adapter), and `oncely/server`'s
 * middleware. Same ledger, same answers: `201` with a `Location`; the body
 * `{ "stall": true }` never answers (a process that died after its effect).
 *
 * The libraries keep time by the wall clock (their TTLs), which a test may
 * not wait on: @node-idempotency's storage is pluggable, so it gets an
 * in-memory one on the test's clock (the same logic as its memory adapter);
 * express-idempotency's memory adapter has no expiry at all, so there is
 * no clock to give it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Idempotency, IdempotencyError } from '@node-idempotency/core';
import { idempotency2HttpCodeMap } from '@node-idempotency/shared';
import express, { type Request as ExpressRequest, type Response as ExpressResponse } from 'express';
import { idempotency as expressIdempotency, getSharedIdempotencyService } from 'express-idempotency';
import { idempotency, memoryIdempotencyStore } from '../../src/server.js';

export interface LibraryApp {
  url: string;
  effects: () => number;
  advance: (ms: number) => Promise<void>;
  close: () => Promise<void>;
}

export const RETENTION_MS = 86_400_000;
export const LEASE_MS = 10_000;

async function listen(app: express.Express, clock: { now: number }, effects: () => number): Promise<LibraryApp> {
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/payments`,
    effects,
    advance: async (ms) => {
      clock.now += ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The business: one effect, then 201 (or never, for a stalled one). */
function payment() {
  let n = 0;
  return {
    effects: () => n,
    pay(req: ExpressRequest, res: ExpressResponse): void {
      n += 1;
      if ((req.body as { stall?: boolean } | undefined)?.stall === true) return;
      res
        .status(201)
        .location(`/payments/pay_${n}`)
        .json({ id: `pay_${n}`, amount: (req.body as { amount?: unknown }).amount ?? null });
    },
  };
}

export async function expressIdempotencyApp(): Promise<LibraryApp> {
  const clock = { now: 0 };
  const { effects, pay } = payment();
  const app = express();
  app.use(express.json());
  app.post('/payments', expressIdempotency(), (req, res) => {
    // Its README: the route must ask whether the middleware answered already.
    if (getSharedIdempotencyService().isHit(req)) return;
    pay(req, res);
  });
  return listen(app, clock, effects);
}

/** @node-idempotency's storage interface, in memory, on the test's clock. */
class ClockStorage {
  readonly #items = new Map<string, { value: string; until: number }>();
  constructor(readonly clock: { now: number }) {}
  async setIfNotExists(key: string, value: string, { ttl }: { ttl?: number } = {}): Promise<boolean> {
    if ((await this.get(key)) !== undefined) return false;
    this.#items.set(key, { value, until: this.clock.now + (ttl ?? Number.POSITIVE_INFINITY) });
    return true;
  }
  async set(key: string, value: string, { ttl }: { ttl?: number }): Promise<void> {
    this.#items.set(key, { value, until: this.clock.now + (ttl ?? Number.POSITIVE_INFINITY) });
  }
  async get(key: string): Promise<string | undefined> {
    const item = this.#items.get(key);
    if (item !== undefined && item.until <= this.clock.now) this.#items.delete(key);
    return item !== undefined && item.until > this.clock.now ? item.value : undefined;
  }
}

export async function nodeIdempotencyApp(wait: boolean): Promise<LibraryApp> {
  const clock = { now: 0 };
  const { effects, pay } = payment();
  const guard = new Idempotency(new ClockStorage(clock) as never, {
    enforceIdempotency: true,
    cacheTTLMS: RETENTION_MS,
    inProgressStrategy: { wait, pollingIntervalMs: 20, maxWaitMs: 200 },
  });
  const app = express();
  app.use(express.json());
  app.post('/payments', async (req, res) => {
    const params = { headers: req.headers, path: req.path, method: req.method, body: req.body };
    try {
      const cached = await guard.onRequest(params);
      if (cached !== undefined) {
        const { status, headers } = cached.additional as { status: number; headers: Record<string, string> };
        res.status(status).set(headers).set('Idempotent-Replayed', 'true').send(cached.body);
        return;
      }
    } catch (error) {
      if (!(error instanceof IdempotencyError)) throw error;
      res.status(idempotency2HttpCodeMap[error.code]).json({ message: error.message });
      return;
    }
    // The response is cached as its interceptor does: body, status and Content-Type.
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const headers = { 'Content-Type': 'application/json; charset=utf-8' };
      guard.onResponse(params, { body, additional: { status: res.statusCode, headers } }).then(
        () => json(body),
        () => json(body),
      );
      return res;
    };
    pay(req, res);
  });
  return listen(app, clock, effects);
}

export async function oncelyApp(): Promise<LibraryApp> {
  const clock = { now: 1_000_000 };
  const { effects, pay } = payment();
  const guard = idempotency({
    store: memoryIdempotencyStore({ now: () => clock.now }),
    scopeOf: (request) => request.headers.get('x-account') ?? 'anonymous',
    routes: { 'POST /payments': {} },
    leaseMs: LEASE_MS,
    retentionMs: RETENTION_MS,
    // No lease renewals: the kit's stalled request stands for a process that died after its effect.
    schedule: () => () => undefined,
  });
  const app = express();
  app.use(guard.middleware as express.RequestHandler);
  app.use(express.json());
  app.post('/payments', (req, res) => pay(req, res));
  return listen(app, clock, effects);
}
