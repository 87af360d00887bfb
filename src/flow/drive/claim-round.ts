/**
 * A run's claim of an operation it did not just write (a stored one
 * resumed, retried or joined, one whose lease this loop lost), and what it
 * does while another owner holds it: take it over once the store's clock
 * says that lease expired, or wait for it to end. Part of the later rounds'
 * chunk (later-round.ts): a first send drives the record it wrote ahead,
 * which needs no claim (run.ts). It imports only types of the loop's
 * modules: what it uses of them comes in the kit.
 */
import type { OperationRecord } from '../../model.js';
import { claim } from '../decide/claim.js';
import { dropOldAttempts } from '../decide/trim-attempts.js';
import type { Engine } from '../engine/engine.js';
import { leaseExpired } from '../engine/lease-expiry.js';
import type { LaterRoundKit } from './later-round-load.js';
import type { StartedAttempt } from './start-at-once.js';

/**
 * Claims `key` (lease, epoch) unless another owner holds it, starting its
 * next attempt in the same write when nothing need be looked at first
 * (start-at-once.ts). `onStoreClock`: only the store's clock judges another
 * owner's lease (PostgreSQL's now()).
 */
export async function claimToDrive(
  kit: LaterRoundKit,
  engine: Engine,
  key: string,
  signal: AbortSignal | undefined,
  onStoreClock: boolean,
): Promise<{ record: OperationRecord | undefined; started: StartedAttempt | undefined }> {
  let started: StartedAttempt | undefined;
  const record = await engine.store.update(key, (current) => {
    const nowMs = engine.runtime.now();
    const claimed = claim(
      kit.CLAIM_KIT,
      current,
      key,
      engine.owner,
      nowMs,
      (lease, epoch) =>
        !onStoreClock &&
        leaseExpired(
          engine.leases,
          kit.TAKEOVER_MARGIN_MS,
          key,
          lease,
          epoch,
          kit.leaseBoundMs(current, engine.owner.leaseMs),
        ),
    );
    started = claimed === current ? undefined : startWithClaim(kit, engine, claimed, signal, nowMs);
    if (started === undefined) return claimed;
    return kit.startAttempt(claimed, engine.owner, nowMs, started.timeoutMs, (r, a) => dropOldAttempts(kit, r, a));
  });
  return { record, started };
}

/**
 * The attempt a fresh claim may start in its own write (start-at-once.ts),
 * when the claimed record's policy is known here; when it is not, the loop
 * finds out after the claim and gives the lease back (claimed-policy.ts).
 */
function startWithClaim(
  kit: LaterRoundKit,
  engine: Engine,
  claimed: OperationRecord,
  signal: AbortSignal | undefined,
  nowMs: number,
): StartedAttempt | undefined {
  let policy: ReturnType<LaterRoundKit['policyOfRecord']>;
  try {
    policy = kit.policyOfRecord(engine.endpoints, claimed);
  } catch {
    return undefined;
  }
  return kit.startAtOnce(engine, claimed, policy, signal, nowMs);
}

/**
 * Another owner holds `key` until `untilMs`: the record, ours now, if the
 * store's clock says that lease expired (and the operation is due);
 * otherwise waits until the watch of that lease ends (lease-watch.ts, on our
 * monotonic clock: a lease the wall clock calls long expired is not looked at
 * again every millisecond meanwhile), at most a poll interval, and says
 * whether the wait ran its course. On the store's clock we cannot tell when
 * it ends: ask again every poll interval.
 */
export async function waitForOwner(
  kit: LaterRoundKit,
  engine: Engine,
  key: string,
  untilMs: number,
  onStoreClock: boolean,
  signal: AbortSignal | undefined,
): Promise<{ taken: OperationRecord } | { waited: boolean }> {
  if (onStoreClock) {
    const nowMs = engine.runtime.now();
    const { id: owner, leaseMs } = engine.owner;
    const [taken] =
      (await engine.store.claimDue?.({ owner, leaseMs, limit: 1, dueBy: nowMs, nowMs, keys: [key] })) ?? [];
    if (taken !== undefined) return { taken };
  }
  const watchMs = onStoreClock ? engine.pollMs : (engine.leases.remainingMs(key) ?? untilMs - engine.runtime.now());
  const waitMs = Math.min(engine.pollMs, Math.max(1, watchMs));
  return { waited: await kit.pause(engine, waitMs, signal) };
}
