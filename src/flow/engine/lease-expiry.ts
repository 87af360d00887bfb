/**
 * Whether another owner's lease may be taken over (see lease-watch.ts for
 * why only after watching it). Asked by the claim of a stored operation
 * (flow/drive/claim-round.ts), in the later rounds' chunk with it: a first
 * send drives its own record and meets no foreign lease. It imports only
 * types.
 */
import type { LeaseWatch } from './lease-watch.js';

/**
 * True once the lease of `key` (held by `owner` at `epoch` until `until`)
 * may be taken over: watched unchanged for `boundMs` (see `leaseBoundMs`)
 * or the wall clock's remainder, whichever is longer, plus `marginMs`
 * (`TAKEOVER_MARGIN_MS`). A lease met for the first time, or renewed, starts a new watch.
 */
export function leaseExpired(
  leases: LeaseWatch,
  marginMs: number,
  key: string,
  lease: { owner: string; until: number },
  epoch: number,
  boundMs: number,
): boolean {
  const { owner, until } = lease;
  const mono = leases.runtime.monotonicNow();
  const seen = leases.watches.get(key);
  if (seen === undefined || seen.owner !== owner || seen.epoch !== epoch || seen.until !== until) {
    const remainingMs = Math.max(until - leases.runtime.now(), boundMs);
    leases.watches.set(key, { owner, epoch, until, expiresAtMono: mono + remainingMs + marginMs });
    return false;
  }
  return mono >= seen.expiresAtMono;
}
