import { describe, expect, it } from 'vitest';
import { attemptTimeouts } from '../../../src/flow/transport/timeouts.js';
import { createFakeRuntime } from '../../../src/testing.js';

describe('attempt timeouts (one sleep for all attempts in flight)', () => {
  it('each fires at its own deadline, in order, also when a shorter one comes later', async () => {
    const rt = createFakeRuntime();
    const t0 = rt.now();
    const fired: Array<[string, number]> = [];
    const timeouts = attemptTimeouts(rt);
    timeouts.start(1_000, () => fired.push(['a', rt.now() - t0]));
    await rt.advance(100);
    timeouts.start(2_000, () => fired.push(['b', rt.now() - t0]));
    timeouts.start(300, () => fired.push(['c', rt.now() - t0]));
    await rt.advance(5_000);
    expect(fired).toEqual([
      ['c', 400],
      ['a', 1_000],
      ['b', 2_100],
    ]);
  });

  it('a stopped one never fires; once none is in flight nothing stays scheduled', async () => {
    const rt = createFakeRuntime();
    const fired: string[] = [];
    const timeouts = attemptTimeouts(rt);
    const stopA = timeouts.start(1_000, () => fired.push('a'));
    const stopB = timeouts.start(1_000, () => fired.push('b'));
    stopA();
    await rt.advance(500);
    expect(rt.pendingTimers).toBe(1);
    stopB();
    await rt.advance(0);
    expect(rt.pendingTimers).toBe(0);
    await rt.advance(5_000);
    expect(fired).toEqual([]);
  });

  it('attempts one after another share the sleep that is already running', async () => {
    const rt = createFakeRuntime();
    const timeouts = attemptTimeouts(rt);
    for (let i = 0; i < 100; i++) timeouts.start(10_000, () => {})();
    // One timeout sleep and one idle check, not one sleep per attempt.
    expect(rt.sleeps).toEqual([10_000, 0]);
    await rt.advance(0);
    expect(rt.pendingTimers).toBe(0);
  });
});
