/**
 * The pieces of a `resume()` pass that need neither the client nor a store:
 * which order stored operations are driven in, which of them are free to
 * drive, a bounded worker pool, and the counts the pass resolves with. In
 * the pass's chunk (resume-pass.ts, loaded with `import()`), so it imports
 * only types and the chunk's own modules: `writeOrder` is handed in
 * (model/vocabulary.ts, already on the page).
 */
import type { OperationRecord, OperationState } from '../../model.js';
import type { PackedSummaries } from '../../store/packed-summaries.js';
import type { RecordSummary } from '../../store/store.js';
import { DriveList } from './drive-list.js';
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
  const order = records.map((_, i) => i);
  scopesInCreationOrder(
    order,
    (i) => (records[i] as T).scope,
    (i) => writeOrder(records[i] as T),
  );
  const placed = order.map((i) => records[i] as T);
  placed.forEach((record, slot) => {
    records[slot] = record;
  });
  return records;
}

/**
 * Within `order` (indexes in due-time order), puts each scope's entries,
 * oldest first, into the slots its entries take (see `orderForResume`). In place.
 */
function scopesInCreationOrder(
  order: number[],
  scopeOf: (index: number) => string | undefined,
  writeOrderOf: (index: number) => number,
): void {
  const slots = new Map<string, number[]>();
  order.forEach((index, slot) => {
    const scope = scopeOf(index);
    if (scope === undefined) return;
    const taken = slots.get(scope);
    if (taken === undefined) slots.set(scope, [slot]);
    else taken.push(slot);
  });
  for (const taken of slots.values()) {
    const scoped = taken.map((slot) => order[slot] as number).sort((a, b) => writeOrderOf(a) - writeOrderOf(b));
    taken.forEach((slot, k) => {
      order[slot] = scoped[k] as number;
    });
  }
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
  const free = freeIndexes(
    records.map((_, i) => i),
    (i) => isFree(records[i] as T),
    (i) => (records[i] as T).scope,
    (i) => writeOrder(records[i] as T),
  );
  return free.map((i) => records[i] as T);
}

/** `freeToDrive` over indexes (`order`): those free, in their order in `order`. */
function freeIndexes(
  order: ArrayLike<number>,
  isFree: (index: number) => boolean,
  scopeOf: (index: number) => string | undefined,
  writeOrderOf: (index: number) => number,
): number[] {
  const free: number[] = [];
  /** Scope → creation order of its earliest record held elsewhere. */
  const heldFrom = new Map<string, number>();
  for (let k = 0; k < order.length; k++) {
    const index = order[k] as number;
    if (isFree(index)) {
      free.push(index);
      continue;
    }
    const scope = scopeOf(index);
    if (scope !== undefined) heldFrom.set(scope, Math.min(heldFrom.get(scope) ?? Infinity, writeOrderOf(index)));
  }
  if (heldFrom.size === 0) return free;
  return free.filter((index) => {
    const scope = scopeOf(index);
    return scope === undefined || writeOrderOf(index) < (heldFrom.get(scope) ?? Infinity);
  });
}

/**
 * What a pass drives, packed (drive-list.ts): the records of `listed` that
 * `freeToDrive` keeps, in the order of `orderForResume`, worked out on
 * indexes into `listed` so that no summary object is held for the whole
 * list (each is made for `isFree` and dropped). `listed` in
 * `earliestFirst` order is already in due-time order, oldest first among
 * equals: all `orderForResume` has left to do is each scope's slots.
 */
export function driveOrder(
  listed: PackedSummaries,
  isFree: (summary: RecordSummary) => boolean,
  writeOrder: WriteOrder,
): DriveList {
  const writeOrderOf = (index: number): number => listed.writeOrderAt(index, writeOrder);
  const scopeOf = (index: number): string | undefined => listed.scopeAt(index);
  const free = freeIndexes(
    listed.earliestFirst(writeOrder),
    (index) => isFree(listed.at(index) as RecordSummary),
    scopeOf,
    writeOrderOf,
  );
  scopesInCreationOrder(free, scopeOf, writeOrderOf);
  return DriveList.fromPacked(listed, free);
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
