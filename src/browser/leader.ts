/**
 * Drainer election across the tabs of one origin with the Web Locks API.
 *
 * Every tab asks for one exclusive lock (`oncely:drainer:<database>`); the
 * browser grants it to one tab at a time and hands it to the next waiting
 * tab when the holder's document goes away (reload, close, crash) or when
 * it releases it. The holder is the only tab that sends ("locks" mode).
 *
 * The invariant that makes this safe: a tab sends only while it holds the
 * lock, and gives the lock back only after its loops have stopped (see
 * `release`, called by `close()` after the core client has closed). So when
 * a tab is granted the lock, no other tab is sending: any lease another
 * owner still holds is stale, and the new drainer may fence it off (see
 * `fenceForeignLease` in drainer.ts) instead of waiting for it to expire.
 *
 * Without Web Locks (insecure contexts, old browsers) every tab is a
 * drainer ("leases" mode): per-record leases with epoch fencing still make
 * sure that one operation is sent by one tab at a time.
 */
import type { LockManagerLike } from './env.js';

export type LeaderMode = 'locks' | 'leases';

export interface Leadership {
  readonly mode: LeaderMode;
  /** This tab may send now. Always true in "leases" mode. */
  isLeader(): boolean;
  /** Called when `isLeader()` changes. Returns an unsubscribe. */
  onChange(fn: (leader: boolean) => void): () => void;
  /** Gives the lock back (or stops waiting for it). Call only once this tab's loops have stopped. */
  release(): Promise<void>;
}

export interface ElectionOptions {
  /** The lock name; one per database. */
  name: string;
  /** `navigator.locks`; undefined selects "leases" mode. */
  locks: LockManagerLike | undefined;
  /** Called when the lock manager refused the request (e.g. a SecurityError); the tab falls back to leases. */
  onError?: (error: unknown) => void;
}

export function electLeader(options: ElectionOptions): Leadership {
  const { locks } = options;
  const listeners = new Set<(leader: boolean) => void>();
  const notify = (leader: boolean): void => {
    for (const fn of [...listeners]) fn(leader);
  };
  if (locks === undefined || typeof locks.request !== 'function') {
    return {
      mode: 'leases',
      isLeader: () => true,
      onChange(fn) {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
      release: async () => undefined,
    };
  }

  let leader = false;
  let mode: LeaderMode = 'locks';
  const giveUp = new AbortController();
  let letGo!: () => void;
  const released = new Promise<void>((resolve) => {
    letGo = resolve;
  });

  const request = locks
    .request(options.name, { mode: 'exclusive', signal: giveUp.signal }, async () => {
      // Browsers call back in a later task; a lock manager that calls back at once
      // must not announce before the caller had a chance to listen.
      await Promise.resolve();
      if (giveUp.signal.aborted) return;
      leader = true;
      notify(true);
      // Held until release(): the browser frees it by itself if this document goes away.
      await released;
      leader = false;
      notify(false);
    })
    .catch((error: unknown) => {
      if (giveUp.signal.aborted) return;
      // The lock manager refused us: without the lock nobody is guaranteed to
      // drain, so this tab drains on leases alone (still one sender per record).
      mode = 'leases';
      leader = true;
      options.onError?.(error);
      notify(true);
    });

  return {
    get mode() {
      return mode;
    },
    isLeader: () => leader,
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async release() {
      giveUp.abort();
      letGo();
      await request;
      leader = false;
    },
  };
}
