/**
 * Pieces of `resume()` and `sweep()` that do not need the client: which
 * order stored operations are driven in, a bounded worker pool, and the
 * record summaries a pass over many records works from.
 */

import { type OperationStore, type RecordFilter, type RecordSummary, summaryOf } from '../store/store.js';
import type { OperationRecord } from './record.js';

/**
 * Earliest `nextAttemptAt` first, except that operations of one scope keep
 * their creation order (they must start in the order they were made): each
 * scope's records are placed, oldest first, into the slots its records took
 * in the due-time order.
 */
export function orderForResume<T extends Pick<OperationRecord, 'nextAttemptAt' | 'createdAt' | 'scope'>>(
  records: T[],
): void {
  records.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.createdAt - b.createdAt);
  const slots = new Map<string, number[]>();
  records.forEach((r, i) => {
    if (r.scope === undefined) return;
    const indexes = slots.get(r.scope);
    if (indexes === undefined) slots.set(r.scope, [i]);
    else indexes.push(i);
  });
  for (const indexes of slots.values()) {
    const scoped = indexes.map((i) => records[i] as T).sort((a, b) => a.createdAt - b.createdAt);
    indexes.forEach((slot, k) => {
      records[slot] = scoped[k] as T;
    });
  }
}

/**
 * Runs `work` over `items`, at most `limit` at once. Each slot is cleared
 * as it is taken, so the array does not keep items that were dealt with.
 */
export async function pool<T>(
  items: (T | undefined)[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      const item = items[at] as T;
      items[at] = undefined;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** `store.listSummaries`, or the summaries of `store.list` for a store without it. */
export async function summaries(store: OperationStore, filter: RecordFilter): Promise<RecordSummary[]> {
  if (store.listSummaries !== undefined) return store.listSummaries(filter);
  return (await store.list(filter)).map(summaryOf);
}
