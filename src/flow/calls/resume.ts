/**
 * Pieces of `resume()` and `sweep()` that do not need the client: which
 * order stored operations are driven in, a bounded worker pool, the record
 * summaries a pass over many records works from, and the counts a pass
 * resolves with (instead of one outcome per operation).
 */

import { type OperationRecord, type OperationState, writeOrder } from '../../model.js';
import { type OperationStore, type RecordFilter, type RecordSummary, summaryOf } from '../../store/store.js';

/**
 * What `resume()` resolves with: how many operations the pass took up, and
 * how each one ended. Counts only: the outcomes themselves go to
 * `onOutcome` one by one, so a pass over 100,000 operations keeps none.
 * `driven` is the sum of the other fields.
 * @example
 * const summary = await client.resume();
 * if (summary.driven > summary.succeeded) console.warn('some operations did not succeed', summary);
 */
export interface ResumeSummary {
  /** Operations this pass took up; `onOutcome` was called once for each. */
  driven: number;
  /** Ended `succeeded`. */
  succeeded: number;
  /** Ended `failed`: definitely not done. */
  failed: number;
  /** Ended `blocked`: the server refused the input or authority. */
  blocked: number;
  /** Ended `unknown`: may have taken effect. */
  unknown: number;
  /**
   * Still `pending` or `in_flight` when the pass let go of them: another
   * owner took them meanwhile (without `waitForLeases`), or the client
   * closed. They stay stored; a later `resume()` continues them.
   */
  unfinished: number;
  /**
   * Open operations this pass left alone because another owner (tab,
   * process, a crashed worker's old id) holds a live lease on them. Not part
   * of `driven`. `resume({ waitForLeases: true })` waits for them. On a
   * store that claims on its own clock (`claimDue`: PostgreSQL) a pass never
   * sees what others hold: this counts only operations taken over from this
   * pass while it drove them.
   */
  heldElsewhere: number;
  /** When the first of those leases expires (epoch ms), if any were held. */
  heldUntil?: number;
}

/** A summary with every count at zero. */
export function emptySummary(): ResumeSummary {
  return { driven: 0, succeeded: 0, failed: 0, blocked: 0, unknown: 0, unfinished: 0, heldElsewhere: 0 };
}

/** Counts one operation left to the owner holding it until `untilMs`. */
export function countHeld(summary: ResumeSummary, untilMs: number): void {
  summary.heldElsewhere++;
  summary.heldUntil = Math.min(summary.heldUntil ?? Number.POSITIVE_INFINITY, untilMs);
}

/** Counts one outcome by its final state. */
export function countOutcome(summary: ResumeSummary, state: OperationState): void {
  summary.driven++;
  if (state === 'pending' || state === 'in_flight') summary.unfinished++;
  else summary[state]++;
}

/**
 * Earliest `nextAttemptAt` first, except that operations of one scope keep
 * their creation order (they must start in the order they were made): each
 * scope's records are placed, oldest first, into the slots its records took
 * in the due-time order. Sorts `records` in place and returns it.
 */
export function orderForResume<T extends Pick<OperationRecord, 'nextAttemptAt' | 'createdAt' | 'scope' | 'seq'>>(
  records: T[],
): T[] {
  records.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || writeOrder(a) - writeOrder(b));
  const slots = new Map<string, number[]>();
  records.forEach((r, i) => {
    if (r.scope === undefined) return;
    const indexes = slots.get(r.scope);
    if (indexes === undefined) slots.set(r.scope, [i]);
    else indexes.push(i);
  });
  for (const indexes of slots.values()) {
    const scoped = indexes.map((i) => records[i] as T).sort((a, b) => writeOrder(a) - writeOrder(b));
    indexes.forEach((slot, k) => {
      records[slot] = scoped[k] as T;
    });
  }
  return records;
}

/**
 * The records a pass may drive: those `isFree` accepts, minus every record
 * queued behind one it refused in the same scope. Another owner (process,
 * tab) holding an operation of a scope is sending it; the operations created
 * after it in that scope must not start before it ends, and nothing in this
 * process would hold them back (its own scope queue only orders what it
 * drives itself).
 */
export function freeToDrive<T extends RecordSummary>(records: readonly T[], isFree: (record: T) => boolean): T[] {
  const free: T[] = [];
  /** Scope → creation order of its earliest record held elsewhere. */
  const heldFrom = new Map<string, number>();
  for (const r of records) {
    if (isFree(r)) free.push(r);
    else if (r.scope !== undefined) heldFrom.set(r.scope, Math.min(heldFrom.get(r.scope) ?? Infinity, writeOrder(r)));
  }
  if (heldFrom.size === 0) return free;
  return free.filter((r) => r.scope === undefined || writeOrder(r) < (heldFrom.get(r.scope) ?? Infinity));
}

/**
 * Runs `work` over `items`, at most `limit` at once. Items are taken from
 * the iterator one at a time, as slots free up, so a list that turns items
 * into objects on demand (`DriveList`) never has them all at once.
 */
export async function pool<T>(
  items: Iterable<T> & { readonly length: number },
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = iterator.next(); next.done !== true; next = iterator.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** `store.listSummaries`, or the summaries of `store.list` for a store without it. */
export async function summaries(store: OperationStore, filter: RecordFilter): Promise<RecordSummary[]> {
  if (store.listSummaries !== undefined) return store.listSummaries(filter);
  return (await store.list(filter)).map(summaryOf);
}
