/**
 * When may another owner's lease be taken over? Not by comparing wall
 * clocks alone: a clock stepped forward (NTP, a user, a VM resumed) would
 * make a lease look expired while its holder's request is still on the
 * wire, and two owners would send the same key at once.
 *
 * So a taker watches each foreign lease it meets. On first sight it notes
 * how much of the lease the wall clock says is left; it takes over only
 * once its own monotonic clock has run that long plus a safety margin with
 * the lease unchanged (same owner, epoch and end). A wall-clock step after
 * first sight changes nothing; a renewed lease starts a new watch.
 *
 * A lease already expired by the wall clock at first sight (a worker
 * restarted after a crash) is taken over at once, as before: nothing in one
 * look can tell a dead holder from a clock that stepped before we looked.
 */
import type { Runtime } from '../../runtime.js';

/** Added to the remaining lease before a takeover: clocks of two machines are never exactly in step. */
export const TAKEOVER_MARGIN_MS = 1_000;

interface Watch {
  owner: string;
  epoch: number;
  until: number;
  /** Our monotonic time at which the lease must have ended. */
  expiresAtMono: number;
}

export class LeaseWatch {
  readonly #runtime: Pick<Runtime, 'now' | 'monotonicNow'>;
  readonly #watches = new Map<string, Watch>();

  constructor(runtime: Pick<Runtime, 'now' | 'monotonicNow'>) {
    this.#runtime = runtime;
  }

  /** True once the lease of `key` (held by `owner` at `epoch` until `until`) may be taken over. */
  expired(key: string, owner: string, epoch: number, until: number): boolean {
    const mono = this.#runtime.monotonicNow();
    const seen = this.#watches.get(key);
    if (seen === undefined || seen.owner !== owner || seen.epoch !== epoch || seen.until !== until) {
      const remainingMs = until - this.#runtime.now();
      if (remainingMs <= 0) return true;
      this.#watches.set(key, { owner, epoch, until, expiresAtMono: mono + remainingMs + TAKEOVER_MARGIN_MS });
      return false;
    }
    return mono >= seen.expiresAtMono;
  }

  /** Forget `key` (we took it, or it settled). */
  forget(key: string): void {
    this.#watches.delete(key);
  }
}
