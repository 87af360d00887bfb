/**
 * `clear()`: removing a user's queued operations (on logout, say) without
 * racing the loop. A live record is first settled as `aborted`, atomically
 * and fenced, so no loop can start an attempt on it; only then is it
 * deleted. A record whose attempt is on the wire cannot be settled from
 * here: it is left to settle normally and reported as `inFlight`.
 */

import { abandon, type SettleKit } from '../flow/decide/settle-stop.js';
import { stopWith } from '../flow/decide/stop.js';
import type { isTerminal } from '../model/vocabulary.js';
import type { OperationRecord } from '../model.js';
import type { OperationStore } from '../store/store.js';

export interface ClearOptions {
  /** Whose operations. @default the current `user()`; every operation when no `user` is configured */
  userId?: string;
  /** Also remove their finished operations (kept for replay and diagnostics otherwise). @default false */
  finished?: boolean;
}

export interface ClearResult {
  /** Keys removed. */
  removed: string[];
  /** Of those, operations an earlier attempt may already have carried out (reconcile them if it matters). */
  mayHaveTakenEffect: string[];
  /** Keys left because an attempt is on the wire right now; they settle normally. */
  inFlight: string[];
}

/**
 * What `clearOperations` works with. What it needs of the loop's code and
 * the model (`revise`, `endLast`, `mayHaveTakenEffect`, `isTerminal`) is handed over
 * by the client, not imported: a chunk loaded later that imports modules the page already has
 * makes a bundler split those modules into shared chunks of their own, more
 * files and more bytes before the first send (issue 33).
 */
export interface ClearContext {
  store: OperationStore;
  now: () => number;
  /** Whose operations: `undefined` for all (the client refuses a `user` option without a current user first). */
  target: string | undefined;
  /** What the record of a removed operation is built with (settle-stop.ts). */
  settleKit: SettleKit;
  mayHaveTakenEffect: (record: OperationRecord) => boolean;
  isTerminal: typeof isTerminal;
}

export async function clearOperations(context: ClearContext, options: ClearOptions = {}): Promise<ClearResult> {
  const { store, target, mayHaveTakenEffect, isTerminal } = context;
  const mine = (record: OperationRecord): boolean => target === undefined || record.meta?.userId === target;
  const result: ClearResult = { removed: [], mayHaveTakenEffect: [], inFlight: [] };
  for (const record of await store.list()) {
    if (!mine(record)) continue;
    const { key } = record;
    if (isTerminal(record.state) && options.finished !== true) continue;
    // What is decided here is decided on the record as stored when clear() acts, never on the listing: the
    // drainer may have finished a listed live one since (a payment that succeeded is not "cancelled"), or
    // retry(key) reopened a listed finished one (its attempt may be on the wire now).
    const now = context.now();
    let abandoned = false;
    const stored = await store.update(key, (current) => {
      abandoned = false;
      if (current === undefined) return current;
      // The stop (and its texts) is built here, in clear()'s chunk, not by the client: a send never needs it.
      const stop = stopWith(context, current, 'aborted', 'Removed by clear()');
      // Settled `aborted` and fenced, or `current` itself when an attempt is on the wire.
      const next = abandon(context.settleKit, current, stop, now);
      abandoned = next !== current;
      return next;
    });
    if (stored === undefined) continue;
    if (!abandoned) {
      // An attempt is on the wire: it settles normally.
      if (!isTerminal(stored.state)) {
        result.inFlight.push(key);
        continue;
      }
      // Finished (by itself, since the listing too): kept, like any finished operation, unless asked for.
      if (options.finished !== true) continue;
    }
    await store.delete(key);
    result.removed.push(key);
    if (mayHaveTakenEffect(stored)) result.mayHaveTakenEffect.push(key);
  }
  return result;
}
