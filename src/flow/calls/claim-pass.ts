/**
 * A `resume()` pass on a store that claims on its own clock (`claimDue`,
 * PostgreSQL): instead of listing every open record and trying each (every
 * worker of a fleet walking the same list, reading busy records and losing
 * compare-and-set races), ask the store for as many due operations as there
 * are free slots, plus a small prefetch, already leased to us, and drive
 * them. A slot that frees starts a prefetched operation at once while a claim
 * refills the prefetch, so a slot does not wait for a claim's round trip
 * while work is due; one claim is on the wire at a time, asking for every
 * slot that freed meanwhile, so the statements per operation stay below one
 * claim and one settle, whatever the fleet size. A prefetched operation whose claim started its
 * attempt is sent only while that claim's lease is surely ours
 * (lease-check.ts), else given back unsent.
 */
import type { OperationRecord } from '../../model.js';
import type { EndpointTable } from '../../options.js';
import type { ClaimRequest } from '../../store/store.js';
import type { StartedAttempt } from '../drive/start-at-once.js';
import type { ClientCore } from './core.js';
import type { ResumeSummary } from './resume.js';
import type { ResumeKit } from './resume-kit.js';
import { countHeld, countOutcome } from './resume-order.js';
import type { ResumePassOptions } from './resume-pass.js';
import type { Outcome } from './settle.js';

/**
 * The attempt the claim recorded as started for this owner (`startFirstAttempt`),
 * if it did: the loop sends it without another write, within the timeout the
 * store computed it with (the stored policy's, cut at the deadline).
 */
function startedBy(
  kit: ResumeKit,
  record: OperationRecord,
  owner: string,
  nowMs: number,
  atMono: number,
  endpoints: EndpointTable,
) {
  const last = record.attempts[record.attempts.length - 1];
  if (record.state !== 'in_flight' || last === undefined || last.endedAt !== undefined) return undefined;
  if (last.owner !== owner || last.startedAt !== nowMs || record.attempts.length !== 1) return undefined;
  const started: StartedAttempt = {
    timeoutMs: kit.attemptTimeoutMs(kit.policyOfRecord(endpoints, record), record.deadlineAt, nowMs),
    atMono,
  };
  return started;
}

/**
 * Operations claimed ahead of free slots: a quarter of `concurrency`, at least one. Small, because a
 * claimed operation waits for a slot under its lease, and because the rest of the fleet cannot take it.
 */
export function prefetchOf(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 4));
}

export async function claimingPass(
  kit: ResumeKit,
  core: ClientCore,
  options: ResumePassOptions,
  claimDue: (request: ClaimRequest) => Promise<OperationRecord[]>,
): Promise<ResumeSummary> {
  const { isTerminal, mayStartNow, pause, emptySummary, guarded, outcomeOf, isHeldElsewhere, liveProfile } = kit;
  const { engine, loops } = core;
  const { store, runtime, owner, shutdown } = engine;
  const onOutcome = options.onOutcome;
  await core.remediation.sweepIfDue();
  const summary = emptySummary();
  let callbackError: { error: unknown } | undefined;
  const report = async (outcome: Outcome): Promise<void> => {
    countOutcome(summary, outcome.state);
    if (onOutcome === undefined) return;
    try {
      await onOutcome(outcome);
    } catch (error) {
      callbackError ??= { error };
    }
  };
  const active = new Set<Promise<void>>();
  /** Operations driven to the end of this pass so far. */
  let ended = 0;
  const start = (key: string, scope: string | undefined, record: Parameters<typeof loops.drive>[4]): void => {
    const run = guarded(
      store,
      key,
      loops
        .drive(key, scope, undefined, 'skip', record)
        .then((r) => outcomeOf(r, {}, false, liveProfile(engine.endpoints, r), runtime)),
    ).then(async (outcome) => {
      // Taken over meanwhile (our lease ran out on the store's clock): that owner's now.
      if (!isTerminal(outcome.state) && isHeldElsewhere(outcome.record, owner.id)) {
        countHeld(summary, outcome.record?.lease?.until ?? runtime.now());
      } else await report(outcome);
    });
    const tracked = run.finally(() => {
      active.delete(tracked);
      ended++;
    });
    active.add(tracked);
  };

  // Claimed and waiting for a slot (the prefetch): a slot that frees starts one at once, and a claim to
  // refill the prefetch goes out meanwhile, so a slot never waits for a claim's round trip while work is due.
  const ready: { record: OperationRecord; started: StartedAttempt | undefined }[] = [];
  const prefetch = prefetchOf(core.concurrency);
  // The claim on the wire: one at a time (the slots that free meanwhile start prefetched operations, and
  // the next claim asks for all of them at once, so claims stay fewer than operations).
  let claiming: Promise<void> | undefined;
  // A claim found nothing and no operation ended while it was on the wire: ask again only once one ends
  // (a slot frees, or a scope's next operation becomes its head).
  let dry = false;
  let claimError: { error: unknown } | undefined;
  const claim = (limit: number): void => {
    const nowMs = Math.floor(runtime.now());
    // Attempt 1 may start in the claim itself when nothing must happen first (start-at-once.ts).
    const startFirstAttempt = mayStartNow(engine, undefined) && engine.mayAttempt === undefined;
    // Read before the claim is sent: the lease of an attempt it starts runs from here (lease-check.ts).
    const atMono = runtime.monotonicNow();
    const endedBefore = ended;
    claiming = claimDue({ owner: owner.id, leaseMs: owner.leaseMs, limit, dueBy: nowMs, nowMs, startFirstAttempt })
      .then(
        (claimed) => {
          for (const record of claimed)
            ready.push({ record, started: startedBy(kit, record, owner.id, nowMs, atMono, engine.endpoints) });
          if (claimed.length === 0 && ended === endedBefore) dry = true;
        },
        (error: unknown) => {
          claimError ??= { error };
        },
      )
      .finally(() => {
        claiming = undefined;
      });
  };
  const startReady = (slots: number): void => {
    for (const next of ready.splice(0, slots)) start(next.record.key, next.record.scope, next);
  };

  for (;;) {
    if (shutdown.stopped || claimError !== undefined) break;
    startReady(core.concurrency - active.size);
    const room = core.concurrency + prefetch - active.size - ready.length;
    if (claiming === undefined && !dry && room > 0) {
      claim(room);
      continue;
    }
    if (active.size > 0 || claiming !== undefined) {
      // A slot frees (or a scope's next operation becomes its head), or the claim comes back: look again.
      const endedBefore = ended;
      await Promise.race(claiming === undefined ? active : [...active, claiming]);
      if (ended > endedBefore) dry = false;
      continue;
    }
    if (options.waitForLeases !== true) break;
    // Asked to wait for other owners: until nothing is open, looking again every poll interval.
    if ((await store.list({ state: ['pending', 'in_flight'], limit: 1 })).length === 0) break;
    if (!(await pause(engine, engine.pollMs))) break;
    dry = false;
  }
  await claiming;
  // Claimed but not started when the pass stopped early (a failed claim): driven, not left to their leases.
  // After `close()`, they are left: their leases end on the store's clock and another owner takes them
  // over, resending an attempt the claim started (if it did) under the same key.
  if (!shutdown.stopped) startReady(ready.length);
  await Promise.all(active);
  if (claimError !== undefined) throw claimError.error;
  if (callbackError !== undefined) throw callbackError.error;
  return summary;
}
