/**
 * The pieces of a `resume()` pass that need neither the client nor a store:
 * which order stored operations are driven in, which of them are free to
 * drive, a bounded worker pool, and the counts the pass resolves with. In
 * the pass's chunk (resume-pass.ts, loaded with `import()`), so it imports
 * only types: `writeOrder` is handed in (model/vocabulary.ts, already on
 * the page).
 */
import type { OperationRecord, OperationState } from '../../model.js';
import type { RecordSummary } from '../../store/store.js';
import type { ResumeSummary } from './resume.js';

/** A record's creation order (model/vocabulary.ts `writeOrder`). */
export type WriteOrder = (record: { seq?: number | undefined; createdAt: number }) => number;

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
  writeOrder: WriteOrder,
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
export function freeToDrive<T extends RecordSummary>(
  records: readonly T[],
  isFree: (record: T) => boolean,
  writeOrder: WriteOrder,
): T[] {
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
