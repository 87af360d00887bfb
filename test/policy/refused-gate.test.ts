/**
 * The gate while its host refuses connections (issue 32, item 3): one probe
 * at a time for every operation, a first attempt too, about a second apart
 * and growing slowly; no token spent; any answer releases everyone at once.
 */
import { describe, expect, it } from 'vitest';
import { HostGate, REFUSED_PROBE_GROWTH, refusedProbeDelayMs } from '../../src/policy/gate.js';

const settings = { capacity: 3, ratio: 0.5, probeIntervalMs: 1_000, rampMs: 500 };
const noJitter = () => 0;

describe('host gate: a host that refuses connections', () => {
  it('holds every operation for one probe per interval, growing slowly, spending no token', () => {
    const gate = new HostGate(settings);
    gate.reportRefused(false, 0, noJitter, 'a');
    expect(gate.refusing).toBe(true);
    // Unbudgeted (a first attempt, or after an unsent one): held too, until the probe is due.
    expect(gate.admitRetry('a', 0, noJitter, false)).toEqual({ kind: 'hold', untilMs: 1_000 });
    expect(gate.admitRetry('b', 500, noJitter)).toEqual({ kind: 'hold', untilMs: 1_000 });
    let at = 1_000;
    const gaps: number[] = [];
    for (let i = 0; i < 10; i++) {
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
    expect(gaps[0]).toBe(Math.round(1_000 * REFUSED_PROBE_GROWTH));
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1]!);
    expect(gaps[gaps.length - 1]).toBeLessThan(2_000);
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

  it('the wait is jittered down by at most a fifth, and capped at ten intervals', () => {
    expect(refusedProbeDelayMs(1_000, 0, () => 0)).toBe(1_000);
    expect(refusedProbeDelayMs(1_000, 0, () => 1)).toBe(800);
    expect(refusedProbeDelayMs(1_000, 1_000, () => 0)).toBe(10_000);
  });
});
