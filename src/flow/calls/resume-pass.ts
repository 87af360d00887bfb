/**
 * One `resume()` pass: drive every open operation of the store (in the
 * order of `orderForResume`, `concurrency` at a time), leave those another
 * owner holds to it unless asked to wait for them, report each outcome as it
 * settles, and resolve with counts. The pure pieces are in flow/calls/resume.ts.
 * Loaded with `import()` on the client's first `resume()` (assembly.ts); what
 * it uses of the client's own code comes in `kit` (resume-kit.ts).
 */

import { PackedSummaries } from '../../store/packed-summaries.js';
import type { OperationStore } from '../../store/store.js';
import { claimingPass } from './claim-pass.js';
import type { ClientCore } from './core.js';
import type { ToDrive } from './drive-list.js';
import type { ResumeSummary } from './resume.js';
import type { ResumeKit } from './resume-kit.js';
import { countHeld, countOutcome, driveOrder, pool } from './resume-order.js';
import type { Outcome } from './settle.js';

/** The client's `ResumeOptions` (documented there). */
export interface ResumePassOptions {
  waitForLeases?: boolean;
  onOutcome?: (outcome: Outcome) => void | Promise<void>;
}

export async function resumePass(kit: ResumeKit, core: ClientCore, options: ResumePassOptions): Promise<ResumeSummary> {
  const { isTerminal, writeOrder, emptySummary, guarded, outcomeOf, isHeldElsewhere, liveProfile } = kit;
  const { engine, loops } = core;
  const { store, runtime, owner, shutdown } = engine;
  // A store that claims on its own clock (PostgreSQL) hands out due operations itself: see claim-pass.ts.
  if (store.claimDue !== undefined) return claimingPass(kit, core, options, store.claimDue.bind(store));
  const waitForLeases = options.waitForLeases ?? false;
  const onOutcome = options.onOutcome;
  const now = runtime.now();
  await core.remediation.sweepIfDue();
  // Key and scope of each open record, in drive order, packed (see DriveList): with 100k open operations,
  // that is all the pass holds per operation that is not in flight. The listing itself is packed too
  // (store/packed-summaries.ts): the file store fills it as it reads, so no summary object is held per record.
  const summary = emptySummary();
  const candidates = driveOrder(
    await openRecords(store, kit),
    // Free records only, and in each scope only those before one another owner holds (see freeToDrive).
    (r) => {
      const free = waitForLeases || r.lease === undefined || r.lease.until <= now || r.lease.owner === owner.id;
      if (!free && r.lease !== undefined) countHeld(summary, r.lease.until);
      return free;
    },
    writeOrder,
  );
  let callbackError: { error: unknown } | undefined;
  // Counted, handed over, and let go: no outcome outlives its callback.
  const report = async (outcome: Outcome): Promise<void> => {
    countOutcome(summary, outcome.state);
    if (onOutcome === undefined) return;
    try {
      await onOutcome(outcome);
    } catch (error) {
      callbackError ??= { error };
    }
  };
  const driven = (item: ToDrive, busy: 'wait' | 'skip', held?: Set<string>): Promise<Outcome> =>
    guarded(
      store,
      item.key,
      loops
        .drive(item.key, item.scope, undefined, busy, undefined, held)
        .then((r) => outcomeOf(r, {}, false, liveProfile(engine.endpoints, r), runtime)),
    );
  const skipped: ToDrive[] = [];
  // First pass: everything free. A record another owner claims meanwhile is
  // skipped, not waited on (several processes draining one store do not queue behind each other).
  // Scopes in which this pass left an operation to another owner: the rest of such a scope waits for a later pass.
  const held = new Set<string>();
  await pool(candidates, core.concurrency, async (item) => {
    const outcome = await driven(item, 'skip', held);
    if (!outcome.ok && !isTerminal(outcome.state) && waitForLeases && !shutdown.stopped) skipped.push(item);
    else if (!isTerminal(outcome.state) && isHeldElsewhere(outcome.record, owner.id)) {
      const watchEnd = runtime.now() + (engine.leases.remainingMs(item.key) ?? 0);
      countHeld(summary, Math.max(outcome.record?.lease?.until ?? 0, watchEnd));
    } else await report(outcome);
  });
  // Second pass (waitForLeases): wait for other owners to finish, or for their leases to expire and take over.
  await pool(skipped, core.concurrency, async (item) => {
    await report(await driven(item, 'wait'));
  });
  if (callbackError !== undefined) throw callbackError.error;
  return summary;
}

/**
 * The store's open records, packed: its own packed listing if it has one
 * (the file store), else its summaries packed. Handed straight to
 * `driveOrder` and not kept in a variable of the pass: an async function's
 * suspended frame may keep what its variables hold, and the listing of 100k
 * records is ~7 MB the pass no longer needs once it has its drive list.
 */
async function openRecords(store: OperationStore, kit: ResumeKit): Promise<PackedSummaries> {
  const { summaries, packedListings } = kit;
  const open = { state: ['pending', 'in_flight'] } as const;
  const packedListing = packedListings.get(store);
  return packedListing === undefined ? PackedSummaries.of(await summaries(store, open)) : packedListing(open);
}
