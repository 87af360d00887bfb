/**
 * When may another owner's lease be taken over? Only on proof (DESIGN.md
 * principle 13), never because a wall clock says it ended: a clock stepped
 * forward (NTP, a user, a VM resumed) makes a lease look expired while its
 * holder's request is still on the wire, and two owners would send the
 * same key at once. One look can never tell a dead holder from a clock that
 * stepped before we looked, so not even a lease "expired an hour ago" at
 * first sight is taken at once.
 *
 * So a taker watches each foreign lease it meets, on its own monotonic
 * clock, and takes over once the lease stayed unchanged (same owner, epoch
 * and end) for as long as a live holder could go without rewriting it —
 * `boundMs`, the attempt timeout plus the lease length, or what the wall
 * clock says is left if that is longer — plus a safety margin. A live
 * holder rewrites its lease (a new epoch or end) before each attempt, and
 * checks it on its own monotonic clock right before the bytes leave
 * (flow/drive/lease-check.ts): one that stayed silent that long is gone,
 * or fenced. A renewed lease starts a new watch. Stores whose clock both
 * sides share (PostgreSQL's `now()`) judge expiry themselves.
 */
import type { Runtime } from '../../runtime.js';

/** Added to the watched time before a takeover: covers the holder's own check and the clocks' drift. */
export const TAKEOVER_MARGIN_MS = 1_000;

/** Default attempt timeout (options.ts), for a record stored without its policy. */
const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;

export interface Watch {
  owner: string;
  epoch: number;
  until: number;
  /** Our monotonic time at which the lease must have ended. */
  expiresAtMono: number;
}

/**
 * How long a live holder of `record` can go without rewriting its lease
 * while a request of it may be on the wire: its attempt's timeout (the
 * record's stored policy) plus a lease length (`leaseMs`, this client's:
 * owners sharing a store share it).
 */
export function leaseBoundMs(
  record: { policySnapshot?: { attemptTimeoutMs?: unknown } | undefined } | undefined,
  leaseMs: number,
): number {
  const timeoutMs = record?.policySnapshot?.attemptTimeoutMs;
  return leaseMs + (typeof timeoutMs === 'number' ? timeoutMs : DEFAULT_ATTEMPT_TIMEOUT_MS);
}

/**
 * The foreign leases this client watches, on its monotonic clock. Whether
 * one may be taken over is told by `leaseExpired` (lease-expiry.ts, in the
 * later rounds' chunk with the claim: a first send meets no foreign lease).
 */
export class LeaseWatch {
  readonly runtime: Pick<Runtime, 'now' | 'monotonicNow'>;
  /** Each watched lease by key: read and written by `leaseExpired`. */
  readonly watches = new Map<string, Watch>();

  constructor(runtime: Pick<Runtime, 'now' | 'monotonicNow'>) {
    this.runtime = runtime;
  }

  /** How long until the watch of `key` ends, on our monotonic clock (undefined: not watched). */
  remainingMs(key: string): number | undefined {
    const seen = this.watches.get(key);
    return seen === undefined ? undefined : Math.max(0, seen.expiresAtMono - this.runtime.monotonicNow());
  }

  /** Forget `key` (we took it, or it settled). */
  forget(key: string): void {
    this.watches.delete(key);
  }
}
