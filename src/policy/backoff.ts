/**
 * Exponential backoff with jitter, as pure functions of serialisable state,
 * so a resumed operation continues its schedule where it stopped.
 *
 * The jitter kinds follow the AWS Architecture Blog's "Exponential Backoff
 * and Jitter": `full` spreads retries best, `equal` keeps a floor,
 * `decorrelated` grows from the previous delay, `none` is for tests and
 * callers that really want lockstep.
 */

export type JitterKind = 'full' | 'equal' | 'decorrelated' | 'none';

export interface BackoffSettings {
  baseDelayMs: number;
  maxDelayMs: number;
  multiplier: number;
  jitter: JitterKind;
}

/**
 * The delay before retry number `retryIndex` (0 for the first retry).
 * `lastDelayMs` is the previous delay (0 before the first), used by
 * `decorrelated`. `random` returns a float in [0, 1).
 *
 * @internal Set through `PolicyOptions.backoff`.
 */
export function backoffDelayMs(
  settings: BackoffSettings,
  retryIndex: number,
  lastDelayMs: number,
  random: () => number,
): number {
  const { baseDelayMs, maxDelayMs, multiplier, jitter } = settings;
  const ceiling = Math.min(maxDelayMs, baseDelayMs * multiplier ** retryIndex);
  switch (jitter) {
    case 'none':
      return Math.round(ceiling);
    case 'full':
      return Math.round(random() * ceiling);
    case 'equal':
      return Math.round(ceiling / 2 + random() * (ceiling / 2));
    case 'decorrelated': {
      const previous = Math.max(baseDelayMs, lastDelayMs);
      const upper = Math.min(maxDelayMs, previous * multiplier);
      return Math.round(Math.min(maxDelayMs, baseDelayMs + random() * Math.max(0, upper - baseDelayMs)));
    }
  }
}

/**
 * The delay that honours a server hint: the hint is the earliest moment of
 * the next attempt (never shortened), and a bounded random spread is added,
 * because an exact hint puts every client that received it on the same beat
 * (waves of N requests every second).
 *
 * `grownMs` is the wait the caller grew from the hint (after "not applied"
 * answers in a row; the hint itself the first time) and `capMs` the most it
 * grows to. The spread stays inside the cap: the wait is `grownMs` plus a
 * random share of `jitterBoundMs` while that fits, and once it does not, the
 * cap minus a random share. A cap on top of which the spread was added made
 * gaps of cap + jitter (4 s for `Retry-After: 1`), so a client could learn of
 * a recovery that long after it. A cap smaller than the hint plus the spread
 * (`Retry-After: 0`) is raised to that: the spread is what breaks the wave.
 *
 * @internal Set through `PolicyOptions.retryAfter`.
 * @example hintedDelayMs({ hintMs: 1_000, grownMs: 3_000, capMs: 3_000 }, 1_000, Math.random) // 2_000–3_000
 */
export function hintedDelayMs(
  wait: { hintMs: number; grownMs: number; capMs: number },
  jitterBoundMs: number,
  random: () => number,
): number {
  const { hintMs, grownMs } = wait;
  const capMs = Math.max(wait.capMs, hintMs + jitterBoundMs);
  const upperMs = Math.min(Math.max(grownMs, hintMs) + jitterBoundMs, capMs);
  const lowerMs = Math.max(hintMs, upperMs - jitterBoundMs);
  return Math.round(lowerMs + random() * (upperMs - lowerMs));
}
