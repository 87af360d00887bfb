/**
 * The options of `idempotency()`: public (all documented, most optional),
 * checked with zod at construction, then resolved into one record per route.
 */
import * as z from 'zod';
import { InvalidOptionsError } from '../errors.js';
import { type EndpointPattern, parseEndpointPattern } from '../policy/endpoints.js';
import { type Schedule, scheduleWithTimers } from './heartbeat.js';
import type { NodeRequestLike } from './node.js';
import type { IdempotencyStore } from './store.js';
import { parseOptions } from './validate.js';

export const REPLAY_POLICIES = ['stripe', 'deterministic', 'success-only'] as const;
/**
 * Which outcomes are stored and replayed:
 * - `stripe`: every outcome, 5xx included: the key never runs twice;
 * - `deterministic`: 2xx and 4xx; a 5xx releases the key, so a retry runs
 *   again (declare it when the handler's 5xx means "nothing happened");
 * - `success-only`: 2xx; any other answer releases the key.
 */
export type ReplayPolicy = (typeof REPLAY_POLICIES)[number];

export interface RouteOptions {
  /** @default 'stripe' @example { replay: 'deterministic' } */
  replay?: ReplayPolicy;
  /** How long a key and its outcome are kept; a key reused later is a new operation. @default 86_400_000 (24 h) */
  retentionMs?: number;
  /**
   * How long a claim lives without news from its process: the server renews
   * it every third of it while the handler runs, so only a claim whose
   * process died (or stalled longer than this) counts as abandoned. Shorter
   * answers a crashed request's retry sooner; longer rides out longer pauses
   * (a database failover, a stop-the-world pause).
   * @default 60_000
   * @example { leaseMs: 15_000 }
   */
  leaseMs?: number;
  /** `Retry-After` of a 409 "in progress", rounded up to seconds. @default 1_000 */
  retryAfterMs?: number;
  /** Refuse a request without a key (400); `false` lets it through unguarded. @default true */
  requireKey?: boolean;
  /**
   * What an abandoned claim (lease over, no outcome) does to the next
   * request with its key: `'never'` answers 409 "outcome unknown" (it may
   * have taken effect) and calls `onAbandoned`; `'safe'` runs it again under
   * a new epoch (declare it only when a second run cannot do harm).
   * Transactional runs (`withIdempotency`) re-run either way: their effect
   * commits with the outcome, so no outcome proves no effect.
   * @default 'never'
   */
  rerun?: 'never' | 'safe';
}

export interface AbandonedClaim {
  key: string;
  /** The route pattern, e.g. `'POST /payments'`. */
  route: string;
  /** What `scopeOf` returned for the caller. */
  caller: string;
  method: string;
  target: string;
}

export interface IdempotencyOptions<Tx = never> extends RouteOptions {
  /** Where records live. @example memoryIdempotencyStore() */
  store: IdempotencyStore<Tx>;
  /**
   * The caller's identity (tenant, account, API key id): records are unique
   * per method, route, caller and key, so one caller's key never replays
   * another's response. Required: there is no safe default (an
   * `Authorization` header changes when a token is refreshed, which would
   * turn a retry into a new operation). An app that only uses the Node
   * middleware may give `nodeScopeOf` instead.
   * @example { scopeOf: (request) => accountIdOf(request) }
   */
  scopeOf?: (request: Request) => string | Promise<string>;
  /**
   * The Node middleware's way to the caller's identity, from Node's own
   * request: what the authentication middleware before it left there
   * (`req.user.id`, `req.auth.sub`), which a Fetch `Request` does not carry.
   * When set, the middleware calls it instead of `scopeOf` and builds no
   * Fetch `Request` at all; `wrap` and `withIdempotency` use `scopeOf`.
   * @default undefined (the middleware calls `scopeOf`)
   * @example { nodeScopeOf: (req) => (req as AuthenticatedRequest).user.id }
   */
  nodeScopeOf?: (req: NodeRequestLike) => string | Promise<string>;
  /**
   * Guarded routes, `'METHOD /path'` patterns (`*` one segment, `**` any),
   * most specific first, each with its own options over the top-level ones.
   * Requests no route matches pass through untouched.
   * @example { 'POST /payments': {}, 'POST /refunds/*': { replay: 'deterministic' } }
   */
  routes: Record<string, RouteOptions>;
  /** @default 'Idempotency-Key' */
  keyHeader?: string;
  /** @default 255 */
  maxKeyLength?: number;
  /**
   * Accept a bare key (`Idempotency-Key: abc`, as oncely's client and Stripe's
   * send it) besides the draft's structured-field string (`"abc"`).
   * @default true
   */
  acceptBareKey?: boolean;
  /**
   * Response headers stored and replayed, besides `Content-Type` and
   * `Location` (never `Set-Cookie` or the like: a replay must not hand out a session).
   * @default []
   * @example { replayHeaders: ['ETag', 'X-Request-Cost'] }
   */
  replayHeaders?: string[];
  /** Called once per abandoned claim a request meets (not for `rerun: 'safe'`): reconcile it. */
  onAbandoned?: (claim: AbandonedClaim) => void | Promise<void>;
  /**
   * Timer of the lease renewals: `schedule(ms, fn)` calls `fn` once after
   * `ms` and returns a cancel. Tests pass a fake runtime's `schedule` to
   * move renewals with virtual time.
   * @default setTimeout (unref'd: it never keeps a process alive)
   * @example { schedule: createFakeRuntime().schedule }
   */
  schedule?: Schedule;
}

export interface ResolvedRoute {
  source: string;
  pattern: EndpointPattern;
  replay: ReplayPolicy;
  retentionMs: number;
  leaseMs: number;
  retryAfterMs: number;
  requireKey: boolean;
  rerun: 'never' | 'safe';
}

export interface Resolved<Tx> {
  store: IdempotencyStore<Tx>;
  scopeOf: ((request: Request) => string | Promise<string>) | undefined;
  nodeScopeOf: ((req: NodeRequestLike) => string | Promise<string>) | undefined;
  routes: ResolvedRoute[];
  keyHeader: string;
  maxKeyLength: number;
  acceptBareKey: boolean;
  /** Lower case, ascending, no repeats (as `storedOf` reads them). */
  replayHeaders: readonly string[];
  onAbandoned: ((claim: AbandonedClaim) => void | Promise<void>) | undefined;
  schedule: Schedule;
}

const MAX_MS = 2 ** 31 - 1;
const fn = <T>() => z.custom<T>((v) => typeof v === 'function', 'must be a function');
const ms = (min: number) => z.number().int().min(min).max(MAX_MS);
const HEADER = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

const routeShape = {
  replay: z.optional(z.enum(REPLAY_POLICIES)),
  retentionMs: z.optional(ms(1)),
  leaseMs: z.optional(ms(1)),
  retryAfterMs: z.optional(ms(0)),
  requireKey: z.optional(z.boolean()),
  rerun: z.optional(z.enum(['never', 'safe'])),
};

const schema = z.strictObject({
  ...routeShape,
  store: z.custom<IdempotencyStore<unknown>>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as { claim?: unknown }).claim === 'function' &&
      typeof (v as { renew?: unknown }).renew === 'function',
    'must be an idempotency store (memoryIdempotencyStore(), postgresIdempotencyStore())',
  ),
  scopeOf: z.optional(fn<(request: Request) => string | Promise<string>>()),
  nodeScopeOf: z.optional(fn<(req: NodeRequestLike) => string | Promise<string>>()),
  routes: z.record(z.string(), z.strictObject(routeShape)),
  keyHeader: z.optional(z.string().regex(HEADER, 'must be a header name')),
  maxKeyLength: z.optional(z.number().int().min(1).max(8192)),
  acceptBareKey: z.optional(z.boolean()),
  replayHeaders: z.optional(z.array(z.string().regex(HEADER, 'must be a header name'))),
  onAbandoned: z.optional(fn<(claim: AbandonedClaim) => void>()),
  schedule: z.optional(fn<Schedule>()),
});

/** Headers a replay must never carry, whatever `replayHeaders` says. */
const NEVER_REPLAYED = new Set(['set-cookie', 'authorization', 'idempotent-replayed', 'content-length']);

export function resolveOptions<Tx>(options: IdempotencyOptions<Tx>): Resolved<Tx> {
  const parsed = parseOptions(schema, options, 'idempotency');
  if (parsed.scopeOf === undefined && parsed.nodeScopeOf === undefined) {
    throw new InvalidOptionsError(
      'idempotency.scopeOf',
      "is required: the caller's identity, e.g. (request) => accountIdOf(request) (or nodeScopeOf, for the Node middleware alone)",
    );
  }
  const routes = Object.entries(parsed.routes).map(([source, route]): ResolvedRoute => {
    let pattern: EndpointPattern;
    try {
      pattern = parseEndpointPattern(source);
    } catch (error) {
      throw new InvalidOptionsError(`idempotency.routes[${JSON.stringify(source)}]`, (error as Error).message);
    }
    return {
      source,
      pattern,
      replay: route.replay ?? parsed.replay ?? 'stripe',
      retentionMs: route.retentionMs ?? parsed.retentionMs ?? 86_400_000,
      leaseMs: route.leaseMs ?? parsed.leaseMs ?? 60_000,
      retryAfterMs: route.retryAfterMs ?? parsed.retryAfterMs ?? 1_000,
      requireKey: route.requireKey ?? parsed.requireKey ?? true,
      rerun: route.rerun ?? parsed.rerun ?? 'never',
    };
  });
  const extra = (parsed.replayHeaders ?? []).map((h) => h.toLowerCase()).filter((h) => !NEVER_REPLAYED.has(h));
  return {
    store: options.store,
    scopeOf: parsed.scopeOf,
    nodeScopeOf: parsed.nodeScopeOf,
    routes,
    keyHeader: parsed.keyHeader ?? 'Idempotency-Key',
    maxKeyLength: parsed.maxKeyLength ?? 255,
    acceptBareKey: parsed.acceptBareKey ?? true,
    replayHeaders: [...new Set(['content-type', 'location', ...extra])].sort(),
    onAbandoned: parsed.onAbandoned,
    schedule: parsed.schedule ?? scheduleWithTimers,
  };
}
