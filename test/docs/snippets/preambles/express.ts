// Preamble of Express blocks (type-checked only): the guard's store, the app and its authentication middleware.
import { idempotency, memoryIdempotencyStore, type NodeRequestLike } from 'oncely/server';

/** What the app's authentication middleware leaves on Node's request. */
interface AuthenticatedRequest extends NodeRequestLike {
  user: { id: string };
}
export declare const app: { use(...handlers: unknown[]): void };
export declare const passport: { authenticate(strategy: string, options: { session: boolean }): unknown };
export const store = memoryIdempotencyStore();
export { type AuthenticatedRequest, idempotency };
