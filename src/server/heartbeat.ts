/**
 * Lease renewal while a handler runs. A claim's lease is how the next
 * request tells a dead claimer from a slow one; a handler that runs longer
 * than its lease must keep saying "still here", or a duplicate would be told
 * "outcome unknown" (or, under `rerun: 'safe'`, run it a second time) while
 * the first run is still going. Every `leaseMs / 3` the claim's lease is
 * renewed, fenced by its epoch: once a newer epoch owns the key (or the
 * outcome is stored), renewal stops. A process that dies renews nothing, so
 * its claim still ends at its lease. The caller stops it on every path.
 *
 * A handler that finishes within a third of its lease costs one timer made
 * and cleared, and no store work.
 */
import type { Claim, IdempotencyStore } from './store.js';

/** `schedule(ms, fn)` calls `fn` once after `ms` and returns a cancel (the runtime's `schedule`). */
export type Schedule = (ms: number, fn: () => void) => () => void;

export interface Heartbeat {
  stop(): void;
}

export function startHeartbeat(
  store: Pick<IdempotencyStore<unknown>, 'renew'>,
  claim: Claim,
  leaseMs: number,
  schedule: Schedule,
): Heartbeat {
  const everyMs = Math.max(1, Math.floor(leaseMs / 3));
  let stopped = false;
  let cancel = schedule(everyMs, beat);
  function beat(): void {
    if (stopped) return;
    store.renew(claim, leaseMs).then(
      (owned) => {
        if (owned && !stopped) cancel = schedule(everyMs, beat);
      },
      // A store that cannot be reached now may be reachable at the next beat; the lease
      // runs on meanwhile, and the next beat is still within it.
      () => {
        if (!stopped) cancel = schedule(everyMs, beat);
      },
    );
  }
  return {
    stop() {
      stopped = true;
      cancel();
    },
  };
}

/** The default `schedule`: a timer that never keeps a Node.js process alive. */
export const scheduleWithTimers: Schedule = (ms, fn) => {
  const timer: unknown = setTimeout(fn, ms);
  (timer as { unref?: () => void }).unref?.();
  return () => clearTimeout(timer as ReturnType<typeof setTimeout>);
};
