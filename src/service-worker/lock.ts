/**
 * The drainer lock as the service worker takes it: only if it is free.
 * Pages hold the same lock (`oncely:drainer:<database>`, see
 * browser/leader.ts) for as long as they live; a worker that waited for it
 * would queue behind an open page and be killed by the browser while
 * waiting. So: free → the worker drains, holding it; held → a page is
 * draining, and the worker leaves it to that page.
 *
 * The lock is released when the callback ends, or by the browser when it
 * stops the worker (mid-fetch included): the next drainer is then granted
 * it and may fence the worker's leases at once, as between tabs.
 * Without Web Locks the worker drains on per-record leases alone.
 */
import type { LockManagerLike } from '../browser/env.js';
import type { LeaderMode } from '../browser/leader.js';
import type { ClientsLike } from './scope.js';

/** What `withDrainLock` resolves with when another context holds the lock. */
export const HELD_ELSEWHERE = Symbol('held elsewhere');

export async function withDrainLock<T>(
  locks: LockManagerLike | undefined,
  name: string,
  fn: (mode: LeaderMode) => Promise<T>,
): Promise<T | typeof HELD_ELSEWHERE> {
  if (locks === undefined || typeof locks.request !== 'function') return fn('leases');
  let outcome: T | typeof HELD_ELSEWHERE = HELD_ELSEWHERE;
  await locks.request(name, { mode: 'exclusive', ifAvailable: true }, async (lock) => {
    if (lock === null) return;
    outcome = await fn('locks');
  });
  return outcome;
}

/**
 * Whether a client of the worker's origin (a page, or a worker of one) is
 * open, and so may hold the drainer lock. A stopped service worker is no
 * client: a lock taken while none is open is one the browser has not yet
 * taken back from a worker it stopped (it does so a few hundred ms after
 * the stop). (The lock manager names each holder's client, but Chromium's
 * ids there are not those of `clients.get`, so the holder cannot be asked.)
 * True when the worker cannot list its clients, as before it asked.
 */
export async function clientOpen(clients: ClientsLike | undefined): Promise<boolean> {
  if (typeof clients?.matchAll !== 'function') return true;
  try {
    return (await clients.matchAll({ includeUncontrolled: true, type: 'all' })).length > 0;
  } catch {
    return true;
  }
}
