/**
 * The gate while its host refuses connections (issue 32, item 3): one probe
 * at a time for every operation, a first attempt too, 500–600 ms apart for
 * the first minute and growing slowly after it; no token spent; any answer
 * releases everyone at once.
 */
import { describe, expect, it } from 'vitest';
import { HostGate } from '../../src/policy/gate.js';
import { REFUSED_PROBE_GROWTH, refusedProbeDelayMs } from '../../src/policy/refused-probe.js';

const settings = { capacity: 3, ratio: 0.5, probeIntervalMs: 1_000, rampMs: 500 };
const noJitter = () => 0;

describe('host gate: a host that refuses connections', () => {
  it('holds every operation for one probe at a time, 600 ms apart for the first minute, spending no token', () => {
    const gate = new HostGate(settings);
    gate.reportRefused(false, 0, noJitter, 'a');
    expect(gate.refusing).toBe(true);
    // Unbudgeted (a first attempt, or after an unsent one): held too, until the probe is due.
    expect(gate.admitRetry('a', 0, noJitter, false)).toEqual({ kind: 'hold', untilMs: 600 });
    expect(gate.admitRetry('b', 500, noJitter)).toEqual({ kind: 'hold', untilMs: 600 });
    let at = 600;
    const gaps: number[] = [];
    // Probe after probe until two minutes in, each refused.
    while (at < 120_000) {
      expect(gate.admitRetry('a', at, noJitter, false)).toEqual({ kind: 'go', atMs: at, probe: true });
      // The probe is out: everyone else waits for it.
      expect(gate.admitRetry('b', at, noJitter, false).kind).toBe('hold');
      gate.spend('a');
      gate.reportRefused(true, at, noJitter, 'a');
      const next = gate.admitRetry('a', at, noJitter, false);
      expect(next.kind).toBe('hold');
      const untilMs = (next as { untilMs: number }).untilMs;
      gaps.push(untilMs - at);
      at = untilMs;
    }
    // The first minute at one pace (a restart, a deploy: noticed within 600 ms): the probes at
    // 600, 1 200, … 59 400 ms are followed by 600 ms gaps, 99 of them...
    const steady = gaps.slice(0, 99);
    expect(new Set(steady)).toEqual(new Set([600]));
    // ...then, from the probe refused at 60 s, each a little later than the one before, towards the 10 s ceiling.
    const after = gaps.slice(99);
    expect(after[0]).toBe(Math.round(600 * REFUSED_PROBE_GROWTH));
    for (let i = 1; i < after.length; i++) expect(after[i]).toBeGreaterThanOrEqual(after[i - 1]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000);
    expect(gate.tokens).toBe(3);
  });

  it("a late refusal of some other operation's attempt does not move the probe", () => {
    const gate = new HostGate(settings);
    gate.reportRefused(false, 0, noJitter, 'a');
    gate.reportRefused(false, 900, noJitter, 'b');
    expect(gate.admitRetry('c', 1_000, noJitter, false)).toEqual({ kind: 'go', atMs: 1_000, probe: true });
  });

  it('the first answer releases every held operation at once; an unbudgeted one goes free', () => {
    const gate = new HostGate(settings);
    let woken = 0;
    gate.onChange(() => woken++);
    gate.reportRefused(false, 0, noJitter, 'a');
    for (const id of ['b', 'c', 'd']) gate.admitRetry(id, 100, noJitter, false);
    expect(gate.admitRetry('a', 1_000, noJitter, false).kind).toBe('go');
    gate.spend('a');
    gate.reportSuccess(true, 1_050, 'a');
    expect(gate.refusing).toBe(false);
    expect(woken).toBeGreaterThan(0);
    for (const id of ['b', 'c', 'd']) {
      expect(gate.admitRetry(id, 1_050, noJitter, false)).toEqual({ kind: 'go', atMs: 1_050, probe: false });
    }
    expect(gate.tokens).toBe(3);
  });

  it('a failing answer (503) also ends the refusal: the host takes connections again', () => {
    const gate = new HostGate(settings);
    gate.reportRefused(false, 0, noJitter, 'a');
    gate.admitRetry('a', 1_000, noJitter, false);
    gate.spend('a');
    gate.reportFailure(true, 1_010, undefined, noJitter, 'a');
    expect(gate.refusing).toBe(false);
  });

  it('the wait is jittered down by at most a sixth (500–600 ms: never three probes in one second), and capped at ten intervals', () => {
    expect(refusedProbeDelayMs(1_000, 0, () => 0)).toBe(600);
    expect(refusedProbeDelayMs(1_000, 0, () => 0.999_999)).toBe(500);
    expect(refusedProbeDelayMs(1_000, 1_000, () => 0)).toBe(10_000);
  });

  it('the first refusal schedules the probe inside the same bound: three probes never fit in one second', () => {
    // Any draw of the jitter: every gap ≥ 500 ms, so a second holds at most two probes.
    const draws = [0, 0.25, 0.5, 0.75, 0.999_999];
    for (const r of draws) {
      const gate = new HostGate(settings);
      gate.reportRefused(false, 0, () => r, 'a');
      const first = gate.admitRetry('a', 0, () => r, false);
      expect(first.kind).toBe('hold');
      const untilMs = (first as { untilMs: number }).untilMs;
      expect(untilMs).toBeGreaterThanOrEqual(500);
      expect(untilMs).toBeLessThanOrEqual(600);
    }
  });
});
