/**
 * The claim of a stored operation: the lease taken when the record is free,
 * the epoch bumped, an attempt left open by an owner that vanished closed as
 * `ambiguous`. In the later rounds' chunk (flow/drive/claim-round.ts): a
 * first send drives the record it wrote ahead, already its own, and needs no
 * claim. It imports only types: what it uses of transitions.ts comes in the
 * kit (`CLAIM_KIT`).
 */
import type { AttemptRecord, OperationRecord } from '../../model.js';
import type { ClaimKit, Owner } from './transitions.js';

/**
 * Takes the lease when the record is free: no lease, an expired lease, or our
 * own. Bumps the epoch. An attempt left open by an owner that vanished
 * (its lease expired mid-flight) is closed as `ambiguous`: it may have
 * reached the server, so the next attempt reuses the same key.
 */
export function claim(
  kit: ClaimKit,
  current: OperationRecord | undefined,
  key: string,
  owner: Owner,
  nowMs: number,
  foreignExpired: (lease: { owner: string; until: number }, epoch: number) => boolean = (lease) => lease.until <= nowMs,
): OperationRecord {
  if (current === undefined) throw new kit.NotFoundError(key);
  if (kit.isTerminal(current.state)) return current;
  const lease = current.lease;
  if (lease !== undefined) {
    // Someone else's: only once it has expired (judged by `foreignExpired`,
    // see flow/engine/lease-watch.ts). Ours and idle (e.g. created already claimed):
    // nothing to write, saving a durable write per operation.
    if (lease.owner !== owner.id) {
      if (!foreignExpired(lease, current.epoch)) return current;
    } else if (lease.until > nowMs && current.state === 'pending') {
      return current;
    }
  }
  const attempts = current.attempts.map(
    (a): AttemptRecord =>
      a.endedAt === undefined
        ? Object.assign({}, a, {
            endedAt: nowMs,
            class: 'ambiguous' as const,
            sent: 'maybe' as const,
            effect: 'unknown' as const,
            error: `owner ${a.owner} ${kit.LOST_DURING_ATTEMPT}`,
          })
        : a,
  );
  return kit.revise(current, {
    state: 'pending',
    attempts,
    epoch: current.epoch + 1,
    lease: {
      owner: owner.id,
      until: kit.leaseUntil(current, Math.max(nowMs, current.nextAttemptAt) + owner.leaseMs, nowMs),
    },
  });
}

/**
 * An attempt nobody saw end: closed by the next owner's claim, with no
 * answer. It may have reached the server, but it told us nothing.
 */
export function closedByTakeover(kit: Pick<ClaimKit, 'LOST_DURING_ATTEMPT'>, attempt: AttemptRecord): boolean {
  return attempt.status === undefined && attempt.error?.endsWith(kit.LOST_DURING_ATTEMPT) === true;
}
