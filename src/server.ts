/**
 * oncely/server — the server half: an idempotency-key guard that keeps the
 * promise the client's key makes (one effect per key, the stored answer
 * replayed, a crash never re-run blindly). Fetch-API handlers and Node
 * middleware on one core; a memory store here, PostgreSQL in
 * `oncely/postgres` (`postgresIdempotencyStore`). Universal: no `node:*`.
 *
 * @example
 * import { idempotency, memoryIdempotencyStore } from 'oncely/server';
 * const guard = idempotency({
 *   store: memoryIdempotencyStore(),
 *   scopeOf: (request) => accountOf(request),
 *   routes: { 'POST /payments': {} },
 * });
 * export const POST = guard.wrap(async (request) => Response.json(await pay(await request.json()), { status: 201 }));
 */
export { type Idempotency, idempotency } from './server/idempotency.js';
export {
  MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
  memoryIdempotencyStore,
} from './server/memory-store.js';
export type { ConnectMiddleware, NodeRequestLike, NodeResponseLike } from './server/node.js';
export type { AbandonedClaim, IdempotencyOptions, ReplayPolicy, RouteOptions } from './server/options.js';
export { PROBLEM_TYPES } from './server/problems.js';
export {
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  LeaseTakenOverError,
  type StoredResponse,
  type TransactionOutcome,
} from './server/store.js';
