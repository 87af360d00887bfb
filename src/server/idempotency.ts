/**
 * `idempotency(options)`: one guard, three ways in. `wrap` for Fetch-style
 * handlers (Hono, Next.js route handlers, Bun, Deno, workers),
 * `withIdempotency` for a handler whose SQL commits with the stored
 * response, `middleware` for Node `http`, Express and Connect.
 */
import { IdempotencyCore, type Incoming } from './core.js';
import { type ConnectMiddleware, connectMiddleware } from './node.js';
import { type IdempotencyOptions, resolveOptions } from './options.js';
import { answerOf } from './replay.js';
import { responseOf } from './response-view.js';

export interface Idempotency<Tx = never> {
  /**
   * The handler, guarded: requests on the configured routes run once per
   * key; every other request passes through.
   * @example export const POST = guard.wrap(async (request) => Response.json(await pay(await request.json()), { status: 201 }));
   */
  wrap(handler: (request: Request) => Response | Promise<Response>): (request: Request) => Promise<Response>;
  /**
   * Runs `handler` with a transaction of the store (a PostgreSQL client
   * inside `BEGIN`): its writes and the stored response commit together or
   * not at all. A crash before the commit leaves no effect, so the next
   * request with the key runs again.
   * @example guard.withIdempotency(request, async (tx) => { await tx.query('INSERT INTO payments …'); return Response.json({ ok: true }) })
   */
  withIdempotency(
    request: Request,
    handler: (tx: Tx, request: Request) => Response | Promise<Response>,
  ): Promise<Response>;
  /**
   * Node `http` / Express / Connect: `app.use(guard.middleware)`. It reads
   * the body of guarded requests: downstream finds it on `req.body` (parsed
   * JSON for JSON types, the bytes otherwise) and the bytes on `req.rawBody`.
   */
  middleware: ConnectMiddleware;
  /** Deletes records past their retention (run it from a timer or a cron job). */
  sweep(): Promise<number>;
}

/**
 * @example
 * const guard = idempotency({
 *   store: memoryIdempotencyStore(),
 *   scopeOf: (request) => request.headers.get('x-account-id') ?? 'anonymous',
 *   routes: { 'POST /payments': { replay: 'stripe' } },
 * });
 */
export function idempotency<Tx = never>(options: IdempotencyOptions<Tx>): Idempotency<Tx> {
  const resolved = resolveOptions(options);
  const core = new IdempotencyCore(resolved);
  let middleware: ConnectMiddleware | undefined;
  return {
    wrap: (handler) => {
      core.requireScopeOf('wrap');
      // No async layer of its own: `answerOf` awaits the handler's response (a throw is the core's to catch).
      const runner = { kind: 'plain', handler: (r: Incoming) => answerOf(handler(r.request())) } as const;
      return async (request) => {
        const incoming = await core.incomingOf(request);
        // Not guarded: the handler's own response, untouched (a streamed body stays a stream).
        if (incoming === undefined) return handler(request);
        return responseOf(await core.guard(incoming, runner));
      };
    },
    withIdempotency: async (request, handler) => {
      core.requireScopeOf('withIdempotency');
      return responseOf(
        await core.handle(request, { kind: 'transaction', handler: (tx, r) => answerOf(handler(tx, r)) }),
      );
    },
    // Made on first use: an app of Fetch handlers alone need not give what it needs.
    get middleware() {
      middleware ??= connectMiddleware(core);
      return middleware;
    },
    sweep: () => resolved.store.sweep(),
  };
}
