import { describe, expect, it } from 'vitest';
import { type BackoffSettings, backoffDelayMs, hintedDelayMs, type JitterKind } from '../../src/policy/backoff.js';
import { createFakeRuntime } from '../../src/testing.js';

const settings = (jitter: JitterKind): BackoffSettings => ({
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  multiplier: 2,
  jitter,
});

function schedule(jitter: JitterKind, seed: number, retries = 12): number[] {
  const rt = createFakeRuntime({ seed });
  const delays: number[] = [];
  let last = 0;
  for (let i = 0; i < retries; i++) {
    last = backoffDelayMs(settings(jitter), i, last, rt.random);
    delays.push(last);
  }
  return delays;
}

describe('backoff', () => {
  it('none: exact exponential growth up to the cap', () => {
    expect(schedule('none', 1, 8)).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
  });

  it.each(['full', 'equal', 'decorrelated'] as const)('%s: stays within bounds for many seeds', (jitter) => {
    for (let seed = 1; seed <= 200; seed++) {
      schedule(jitter, seed).forEach((delay, i) => {
        const ceiling = Math.min(5_000, 100 * 2 ** i);
        expect(delay).toBeGreaterThanOrEqual(
          jitter === 'equal' ? Math.floor(ceiling / 2) : jitter === 'decorrelated' ? 100 : 0,
        );
        expect(delay).toBeLessThanOrEqual(jitter === 'decorrelated' ? 5_000 : ceiling);
      });
    }
  });

  it.each(['full', 'equal', 'decorrelated'] as const)('%s: delays actually vary between clients', (jitter) => {
    const thirdRetry = new Set(Array.from({ length: 50 }, (_, seed) => schedule(jitter, seed + 1)[3]));
    expect(thirdRetry.size).toBeGreaterThan(25);
  });

  it('is deterministic for a seed', () => {
    expect(schedule('full', 42)).toEqual(schedule('full', 42));
  });

  it('a server hint is the earliest time, with bounded jitter on top', () => {
    const rt = createFakeRuntime({ seed: 3 });
    const delays = Array.from({ length: 500 }, () =>
      hintedDelayMs({ hintMs: 2_000, grownMs: 2_000, capMs: 6_000 }, 1_000, rt.random),
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(3_000);
    expect(new Set(delays).size).toBeGreaterThan(100);
  });

  const spread = (wait: { hintMs: number; grownMs: number; capMs: number }, jitterMs: number): number[] => {
    const rt = createFakeRuntime({ seed: 4 });
    return Array.from({ length: 500 }, () => hintedDelayMs(wait, jitterMs, rt.random));
  };

  it('keeps the jitter inside the cap: at the cap the wait is the cap minus a random share', () => {
    // Retry-After: 1 grown to its cap of 3 s: between 2 and 3 s, never 3 s plus the jitter.
    const atCap = spread({ hintMs: 1_000, grownMs: 3_000, capMs: 3_000 }, 1_000);
    expect(Math.min(...atCap)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...atCap)).toBeLessThanOrEqual(3_000);
    expect(Math.max(...atCap) - Math.min(...atCap)).toBeGreaterThan(900);
    // Grown to 2 s, 1 s below the cap: the whole spread fits, 2 to 3 s.
    const below = spread({ hintMs: 1_000, grownMs: 2_000, capMs: 3_000 }, 1_000);
    expect(Math.min(...below)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...below)).toBeLessThanOrEqual(3_000);
    // A spread wider than what lies between hint and cap keeps its width: from the hint to hint + spread.
    const wide = spread({ hintMs: 1_000, grownMs: 3_000, capMs: 3_000 }, 5_000);
    expect(Math.min(...wide)).toBeGreaterThanOrEqual(1_000);
    expect(Math.min(...wide)).toBeLessThan(1_100);
    expect(Math.max(...wide)).toBeLessThanOrEqual(6_000);
    expect(Math.max(...wide)).toBeGreaterThan(5_900);
  });

  it('Retry-After: 0 keeps its whole spread (a cap of three hints would be none)', () => {
    const zero = spread({ hintMs: 0, grownMs: 0, capMs: 0 }, 1_000);
    expect(Math.min(...zero)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...zero)).toBeLessThanOrEqual(1_000);
    expect(Math.max(...zero)).toBeGreaterThan(900);
  });

  it('without jitter the wait is exactly the grown one', () => {
    expect(spread({ hintMs: 1_000, grownMs: 3_000, capMs: 3_000 }, 0)).toEqual(Array(500).fill(3_000));
    expect(spread({ hintMs: 1_000, grownMs: 2_000, capMs: 3_000 }, 0)).toEqual(Array(500).fill(2_000));
  });
});
