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
    const delays = Array.from({ length: 500 }, () => hintedDelayMs(2_000, 1_000, rt.random));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(3_000);
    expect(new Set(delays).size).toBeGreaterThan(100);
  });
});
