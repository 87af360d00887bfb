import { describe, expect, it } from 'vitest';
import { HostGate } from '../../src/policy/gate.js';
import { HostGates } from '../../src/policy/lazy-gate.js';

const settings = { capacity: 3, ratio: 0.5, probeIntervalMs: 1_000, rampMs: 500 };
const noJitter = () => 0;

describe('host gate', () => {
  it('closed: lets retries through while tokens last, then opens', () => {
    const gate = new HostGate(settings);
    expect(gate.mode).toBe('closed');
    for (let i = 0; i < 3; i++)
      expect(gate.admitRetry(`op${i}`, 0, noJitter)).toEqual({ kind: 'go', atMs: 0, probe: false });
    expect(gate.tokens).toBe(0);
    const probe = gate.admitRetry('op3', 0, noJitter);
    expect(gate.mode).toBe('open');
    expect(probe).toEqual({ kind: 'go', atMs: 0, probe: true });
    expect(gate.admitRetry('op4', 0, noJitter)).toEqual({ kind: 'hold', untilMs: 1_000 });
    expect(gate.heldCount).toBe(1);
  });

  it('first attempts refill a share of the budget, capped', () => {
    const gate = new HostGate(settings);
    gate.admitRetry('a', 0, noJitter);
    gate.admitRetry('b', 0, noJitter);
    gate.noteFirstAttempt();
    expect(gate.tokens).toBe(1.5);
    for (let i = 0; i < 10; i++) gate.noteFirstAttempt();
    expect(gate.tokens).toBe(3);
  });

  it('open: one probe per interval, never before Retry-After', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    gate.reportFailure(false, 0, 3_000, noJitter);
    expect(gate.admitRetry('a', 100, noJitter)).toEqual({ kind: 'hold', untilMs: 3_000 });
    expect(gate.admitRetry('a', 3_000, noJitter)).toMatchObject({ kind: 'go', probe: true });
    expect(gate.admitRetry('b', 3_000, noJitter)).toMatchObject({ kind: 'hold' });
    gate.reportFailure(true, 3_050, 500, noJitter);
    // Next probe: one interval after the failed probe (the hint was shorter).
    expect(gate.admitRetry('b', 3_500, noJitter)).toEqual({ kind: 'hold', untilMs: 4_050 });
    expect(gate.admitRetry('b', 4_050, noJitter)).toMatchObject({ kind: 'go', probe: true });
  });

  it('a probe admitted before the gate re-opened: its late answer or release never lets a second probe out', () => {
    const gate = new HostGate({ ...settings, capacity: 0, rampMs: 10_000 });
    gate.reportFailure(false, 0, undefined, noJitter);
    // A goes as the probe; while it is out, another operation's first attempt succeeds: half-open.
    expect(gate.admitRetry('A', 0, noJitter)).toMatchObject({ kind: 'go', probe: true });
    gate.admitRetry('held', 0, noJitter);
    gate.reportSuccess(false, 100);
    expect(gate.mode).toBe('half-open');
    // A failure re-opens it (A's probe is forgotten), and B is the next probe.
    gate.reportFailure(false, 200, undefined, noJitter);
    expect(gate.mode).toBe('open');
    expect(gate.admitRetry('B', 200, noJitter)).toMatchObject({ kind: 'go', probe: true });
    // A lets its probe go late (its attempt failed locally): B's probe is still the one out.
    gate.releaseProbe('A');
    expect(gate.admitRetry('C', 300, noJitter)).toMatchObject({ kind: 'hold' });
    // A late success of A's still proves the host serves (half-open), without freeing B's probe as its own.
    gate.reportSuccess(true, 350, 'A');
    expect(gate.mode).toBe('half-open');
    // B's answer re-opens the gate and frees its probe: the next one goes an interval later.
    gate.reportFailure(true, 400, undefined, noJitter, 'B');
    expect(gate.mode).toBe('open');
    expect(gate.admitRetry('C', 1_400, noJitter)).toMatchObject({ kind: 'go', probe: true });
  });

  it('a successful probe goes half-open: the ramp lets a few go at once, the rest after the next step, and notifies', () => {
    const gate = new HostGate({ ...settings, capacity: 1 });
    let notified = 0;
    gate.onChange(() => notified++);
    expect(gate.admitRetry('first', 0, noJitter)).toMatchObject({ probe: false });
    expect(gate.admitRetry('probe', 0, noJitter)).toMatchObject({ probe: true });
    for (let i = 0; i < 12; i++) gate.admitRetry(`held${i}`, 0, noJitter);
    expect(gate.heldCount).toBe(12);
    gate.reportSuccess(true, 1_000, 'probe');
    expect(gate.mode).toBe('half-open');
    expect(notified).toBe(1);
    const asked = Array.from({ length: 12 }, (_, i) => gate.admitRetry(`held${i}`, 1_000, noJitter));
    // RAMP_FIRST (8) go now; the others wait for the next step (rampMs / 20 = 25 ms), not the old 500 ms spread.
    expect(asked.slice(0, 8).every((a) => a.kind === 'go' && a.atMs === 1_000)).toBe(true);
    expect(asked.slice(8)).toEqual(Array.from({ length: 4 }, () => ({ kind: 'hold', untilMs: 1_025 })));
    expect(gate.heldCount).toBe(4);
    for (let i = 0; i < 8; i++) {
      gate.spend(`held${i}`);
      gate.reportSuccess(false, 1_010, `held${i}`);
    }
    // Successes before the step do not widen the window early.
    expect(gate.admitRetry('held8', 1_010, noJitter)).toMatchObject({ kind: 'hold' });
    // At the step, with half of those released answered well, twice as many may have gone.
    for (let i = 8; i < 12; i++) expect(gate.admitRetry(`held${i}`, 1_025, noJitter)).toMatchObject({ kind: 'go' });
    expect(gate.heldCount).toBe(0);
    for (let i = 8; i < 12; i++) {
      gate.spend(`held${i}`);
      gate.reportSuccess(false, 1_030, `held${i}`);
    }
    // Every release answered well and nothing held: closed, with a full budget, long before rampMs.
    expect(gate.mode).toBe('closed');
    expect(gate.tokens).toBe(1);
  });

  it('half-open: without successes the ramp does not widen, but the old spread over rampMs still releases everyone', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    gate.admitRetry('probe', 0, noJitter);
    for (let i = 0; i < 20; i++) gate.admitRetry(`h${i}`, 0, noJitter);
    gate.reportSuccess(true, 1_000, 'probe');
    const goAt = new Map<string, number>();
    // The released send and answer nothing yet (slow host): ask every 5 ms until everyone went.
    for (let at = 1_000; at <= 1_500 && goAt.size < 20; at += 5) {
      for (let i = 0; i < 20; i++) {
        if (goAt.has(`h${i}`)) continue;
        const a = gate.admitRetry(`h${i}`, at, noJitter);
        if (a.kind === 'go') {
          goAt.set(`h${i}`, at);
          gate.spend(`h${i}`);
        }
      }
    }
    // 8 at once; the 9th waits for its place on the spread (8 × 500 / 20 = 200 ms), not for the step.
    expect([...goAt.values()].filter((at) => at === 1_000)).toHaveLength(8);
    expect(goAt.get('h8')).toBe(1_200);
    expect(Math.max(...goAt.values())).toBeLessThanOrEqual(1_500);
    expect(goAt.size).toBe(20);
  });

  it('a failure during the ramp opens the gate again: the rest are held for the next probe, not sent', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    gate.admitRetry('probe', 0, noJitter);
    for (let i = 0; i < 20; i++) gate.admitRetry(`h${i}`, 0, noJitter);
    gate.reportSuccess(true, 1_000, 'probe');
    for (let i = 0; i < 8; i++) expect(gate.admitRetry(`h${i}`, 1_000, noJitter)).toMatchObject({ kind: 'go' });
    gate.spend('h0');
    gate.reportFailure(false, 1_005, 1_000, noJitter, 'h0');
    expect(gate.mode).toBe('open');
    // Past every step and every place on the old spread: held until the next probe, after the Retry-After.
    for (let i = 8; i < 20; i++) expect(gate.admitRetry(`h${i}`, 1_600, noJitter)).toMatchObject({ kind: 'hold' });
    expect(gate.admitRetry('h8', 2_005, noJitter)).toMatchObject({ kind: 'go', probe: true });
  });

  it('a ramp that does not widen while fewer than half of those released succeeded', () => {
    const gate = new HostGate({ ...settings, capacity: 0, rampMs: 10_000 });
    gate.admitRetry('probe', 0, noJitter);
    for (let i = 0; i < 20; i++) gate.admitRetry(`h${i}`, 0, noJitter);
    gate.reportSuccess(true, 1_000, 'probe');
    for (let i = 0; i < 8; i++) gate.admitRetry(`h${i}`, 1_000, noJitter);
    for (let i = 0; i < 3; i++) gate.reportSuccess(false, 1_100, `h${i}`);
    // Step 500 ms; 3 of 8 answered: no wider at 1 600, and the held wait for a success or their place on
    // the spread (8 × 10 000 / 20 = 4 s), not for a step already past (which would make them ask every ms).
    expect(gate.admitRetry('h8', 1_600, noJitter)).toEqual({ kind: 'hold', untilMs: 5_000 });
    // The fourth success makes half: the window widens at once, and the held are told.
    let notified = 0;
    gate.onChange(() => notified++);
    gate.reportSuccess(false, 1_650, 'h3');
    expect(notified).toBe(1);
    expect(gate.admitRetry('h8', 1_650, noJitter)).toMatchObject({ kind: 'go' });
  });

  it('recovery is announced once, when a success proves the host back after the gate opened', () => {
    const gate = new HostGate({ ...settings, capacity: 1 });
    let recovered = 0;
    const unsubscribe = gate.onChange((proof) => {
      if (proof) recovered++;
    });
    // Closed: a success is no news.
    gate.reportSuccess(false, 0);
    gate.admitRetry('a', 0, noJitter);
    expect(gate.admitRetry('probe', 0, noJitter)).toMatchObject({ probe: true });
    // A failing probe is no recovery.
    gate.reportFailure(true, 100, 1_000, noJitter, 'probe');
    expect(recovered).toBe(0);
    expect(gate.admitRetry('probe', 1_100, noJitter)).toMatchObject({ probe: true });
    gate.reportSuccess(true, 1_150, 'probe');
    expect(recovered).toBe(1);
    // Successes during the ramp do not announce it again.
    gate.reportSuccess(false, 1_160);
    expect(recovered).toBe(1);
    unsubscribe();
    gate.reportFailure(false, 1_170, undefined, noJitter);
    gate.reportSuccess(false, 1_180);
    expect(recovered).toBe(1);
  });

  it('a failure while half-open opens the gate again', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    gate.admitRetry('probe', 0, noJitter);
    gate.admitRetry('held', 0, noJitter);
    gate.reportSuccess(true, 1_000);
    gate.reportFailure(false, 1_010, 2_000, noJitter);
    expect(gate.mode).toBe('open');
    expect(gate.admitRetry('held', 1_020, noJitter)).toEqual({ kind: 'hold', untilMs: 3_010 });
  });

  it('any success while open (e.g. a new first attempt) proves recovery: half-open', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    gate.admitRetry('probe', 0, noJitter);
    gate.reportSuccess(false, 10);
    expect(gate.mode).toBe('half-open');
  });
});

describe('an admission its operation does not use', () => {
  it('a token given back is in the budget again', () => {
    const gate = new HostGate({ ...settings, capacity: 1 });
    expect(gate.admitRetry('a', 0, noJitter)).toEqual({ kind: 'go', atMs: 0, probe: false });
    expect(gate.tokens).toBe(0);
    gate.giveBack('a');
    expect(gate.tokens).toBe(1);
    expect(gate.admitRetry('b', 0, noJitter)).toEqual({ kind: 'go', atMs: 0, probe: false });
    expect(gate.mode).toBe('closed');
  });

  it('a probe given back lets the next one go at once, and wakes the held', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    let notified = 0;
    gate.onChange(() => notified++);
    expect(gate.admitRetry('a', 0, noJitter)).toMatchObject({ kind: 'go', probe: true });
    expect(gate.admitRetry('b', 0, noJitter)).toMatchObject({ kind: 'hold' });
    gate.giveBack('a');
    expect(notified).toBe(1);
    expect(gate.admitRetry('b', 0, noJitter)).toMatchObject({ kind: 'go', probe: true });
  });

  it('once spent (its attempt started) nothing is given back: the answer reports it', () => {
    const gate = new HostGate({ ...settings, capacity: 1 });
    gate.admitRetry('a', 0, noJitter);
    gate.spend('a');
    gate.giveBack('a');
    expect(gate.tokens).toBe(0);
    const probe = gate.admitRetry('b', 0, noJitter);
    expect(probe).toMatchObject({ kind: 'go', probe: true });
    gate.spend('b');
    gate.giveBack('b');
    expect(gate.admitRetry('c', 0, noJitter)).toMatchObject({ kind: 'hold' });
  });

  it('given back twice, or never admitted: nothing more is given', () => {
    const gate = new HostGate({ ...settings, capacity: 2 });
    gate.admitRetry('a', 0, noJitter);
    gate.admitRetry('b', 0, noJitter);
    gate.giveBack('a');
    gate.giveBack('a');
    gate.giveBack('never');
    expect(gate.tokens).toBe(1);
  });

  it('a probe the gate already forgot (it opened again) does not release the next probe', () => {
    const gate = new HostGate({ ...settings, capacity: 0 });
    expect(gate.admitRetry('old', 0, noJitter)).toMatchObject({ probe: true });
    // Another operation's first attempt succeeds (half-open), then a failure opens the gate again.
    gate.reportSuccess(false, 10);
    gate.reportFailure(false, 20, undefined, noJitter);
    expect(gate.admitRetry('new', 20, noJitter)).toMatchObject({ kind: 'go', probe: true });
    gate.giveBack('old');
    expect(gate.admitRetry('third', 20, noJitter)).toMatchObject({ kind: 'hold' });
  });
});

describe('host gates', () => {
  it('one gate per scope, created on first use and kept', () => {
    const gates = new HostGates();
    const a = gates.gate('api.example.test', settings);
    expect(gates.gate('api.example.test', { ...settings, capacity: 99 })).toBe(a);
    expect(a.settings.capacity).toBe(3);
    expect(gates.gate('other.example.test', settings)).not.toBe(a);
  });
});
