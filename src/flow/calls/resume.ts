/**
 * Pieces of `resume()` and `sweep()` that do not need the client: the
 * record summaries a pass over many records works from, and the counts a
 * pass resolves with (instead of one outcome per operation). The pass's own
 * pieces (order, worker pool, counting) are in resume-order.ts, in the
 * pass's chunk.
 */

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

/** `store.listSummaries`, or the summaries of `store.list` for a store without it. */
export async function summaries(store: OperationStore, filter: RecordFilter): Promise<RecordSummary[]> {
  if (store.listSummaries !== undefined) return store.listSummaries(filter);
  return (await store.list(filter)).map(summaryOf);
}
