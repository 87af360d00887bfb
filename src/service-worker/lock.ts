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
