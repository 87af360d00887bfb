/**
 * The loop holds a host's gate as a `LazyGate`: pristine (no code of its
 * own) until the first attempt that did not simply succeed, then the full
 * `HostGate`. Pristine is sound only if every call the success path makes
 * changes nothing in a real gate: checked here call by call, then the
 * hand-over.
 */
import { describe, expect, it } from 'vitest';
import { HostGate } from '../../src/policy/gate.js';
import { LazyGate } from '../../src/policy/lazy-gate.js';

const settings = { capacity: 2, ratio: 0.5, probeIntervalMs: 1_000, rampMs: 500 };
const noJitter = () => 0;

/** What can be seen of a gate's state, and how it answers the next budgeted retries. */
function stateOf(gate: HostGate): unknown {
  const seen = { mode: gate.mode, tokens: gate.tokens, refusing: gate.refusing, held: gate.heldCount };
  const answers = ['x', 'y', 'z'].map((id) => gate.admitRetry(id, 100, noJitter));
  return { ...seen, answers };
}

describe('LazyGate', () => {
  it('pristine: the success path leaves a real gate exactly as a fresh one', () => {
    const real = new HostGate(settings);
    for (let i = 0; i < 5; i++) real.noteFirstAttempt();
    expect(real.admitRetry('a', 10, noJitter, false)).toEqual({ kind: 'go', atMs: 10, probe: false });
    real.spend('a');
    real.reportSuccess(false, 20, 'a');
    real.giveBack('a');
    real.forget('a');
    real.releaseProbe('a');
    expect(stateOf(real)).toEqual(stateOf(new HostGate(settings)));
  });

  it('pristine: answers what the success path asks as a fresh gate would, and refuses what needs the real one', () => {
    const lazy = new LazyGate(settings);
    expect(lazy.full).toBeUndefined();
    expect(lazy.refusing).toBe(false);
    lazy.noteFirstAttempt();
    expect(lazy.admitRetry('a', 10, noJitter, false)).toEqual(
      new HostGate(settings).admitRetry('a', 10, noJitter, false),
    );
    lazy.spend('a');
    lazy.reportSuccess(false, 20, 'a');
    lazy.giveBack('a');
    lazy.forget('a');
    lazy.releaseProbe('a');
    expect(lazy.full).toBeUndefined();
    expect(() => lazy.admitRetry('b', 10, noJitter)).toThrow(/upgrade it first/);
    expect(() => lazy.reportFailure(false, 10, undefined, noJitter)).toThrow(/upgrade it first/);
    expect(() => lazy.reportRefused(false, 10, noJitter)).toThrow(/upgrade it first/);
  });

  it('upgraded: one real gate for every holder, built from its settings, heard by the listeners added before', () => {
    const lazy = new LazyGate({ ...settings, capacity: 1 });
    const heard: boolean[] = [];
    const stop = lazy.onChange((recovered) => heard.push(recovered));
    const full = lazy.upgrade(HostGate);
    expect(lazy.upgrade(HostGate)).toBe(full);
    expect(lazy.full).toBe(full);
    expect(full.settings.capacity).toBe(1);
    // Every call goes to the real gate now: the budget is spent, the gate opens and probes.
    expect(lazy.admitRetry('a', 0, noJitter)).toMatchObject({ kind: 'go', probe: false });
    expect(lazy.admitRetry('b', 0, noJitter)).toMatchObject({ kind: 'go', probe: true });
    expect(full.mode).toBe('open');
    lazy.reportSuccess(true, 10, 'b');
    expect(full.mode).toBe('half-open');
    expect(heard).toEqual([true]);
    lazy.reportRefused(false, 20, noJitter);
    expect(lazy.refusing).toBe(true);
    stop();
    lazy.reportSuccess(false, 30);
    expect(lazy.refusing).toBe(false);
    expect(heard).toEqual([true]);
  });
});
