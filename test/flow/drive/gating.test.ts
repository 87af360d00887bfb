import { describe, expect, it } from 'vitest';
import { Emitter } from '../../../src/events.js';
import { HOSTS_KEPT_MAX, hostOf, hostsKeptCount } from '../../../src/flow/drive/gating.js';
import { admit as admitWith } from '../../../src/flow/drive/next-step.js';
import { NEXT_STEP_KIT } from '../../../src/flow/drive/next-step-load.js';
import type { Engine } from '../../../src/flow/engine/engine.js';
import { Shutdown } from '../../../src/flow/engine/shutdown.js';
import type { OperationRecord } from '../../../src/model.js';
import { HostGate } from '../../../src/policy/gate.js';
import { sampleRecord } from '../../../src/store/contract/sample.js';
import { createFakeRuntime } from '../../../src/testing.js';

/** What `admit` uses of the engine: the runtime, the events, the shutdown switch. */
function engineFor(): Engine {
  const parts: Pick<Engine, 'runtime' | 'events' | 'shutdown'> = {
    runtime: createFakeRuntime(),
    events: new Emitter(),
    shutdown: new Shutdown(),
  };
  return parts as Engine;
}

const settings = { capacity: 1, ratio: 0.1, probeIntervalMs: 1_000, rampMs: 500 };
const noJitter = () => 0;
const base = { key: 'late', operation: 'POST https://api.example.test/payments', fingerprint: 'a'.repeat(64) };

/** `admit` for a budgeted retry, with the loop's kit. */
const admit = (...args: [Engine, HostGate, OperationRecord, typeof base, AbortSignal | undefined]) =>
  admitWith(...args, true, NEXT_STEP_KIT);

describe('admit: an admission that will not lead to an attempt is given back', () => {
  it('a probe handed to an operation already past its deadline (a wait that ended late)', async () => {
    const engine = engineFor();
    const now = engine.runtime.now();
    const gate = new HostGate({ ...settings, capacity: 0 });
    // Open, its last probe failed 5 s ago: the next probe is due.
    expect(gate.admitRetry('earlier', now - 5_000, noJitter)).toMatchObject({ kind: 'go', probe: true });
    gate.reportFailure(true, now - 5_000, undefined, noJitter);
    const late = sampleRecord('late', { createdAt: now - 60_000, deadlineAt: now - 1 });
    expect(await admit(engine, gate, late, base, undefined)).toBe('past_deadline');
    // The probe is free: the next operation's retry goes as the probe, instead of being held.
    expect(gate.admitRetry('next', now, noJitter)).toMatchObject({ kind: 'go', probe: true });
  });

  it('a token handed to an operation already past its deadline', async () => {
    const engine = engineFor();
    const now = engine.runtime.now();
    const gate = new HostGate(settings);
    const late = sampleRecord('late', { createdAt: now - 60_000, deadlineAt: now - 1 });
    expect(await admit(engine, gate, late, base, undefined)).toBe('past_deadline');
    expect(gate.tokens).toBe(1);
    expect(gate.mode).toBe('closed');
  });
});

describe('the host of a stored URL, for its gate', () => {
  it('is the URL host, port included, the same on every call', () => {
    expect(hostOf('https://api.example.com/v1/payments')).toBe('api.example.com');
    expect(hostOf('https://api.example.com/v1/payments')).toBe('api.example.com');
    expect(hostOf('http://127.0.0.1:8080/payments?x=1')).toBe('127.0.0.1:8080');
    expect(hostOf('https://API.Example.com:443/a')).toBe('api.example.com');
  });

  it('remembers a bounded number of URLs (paths with ids do not grow it without end)', () => {
    for (let i = 0; i < HOSTS_KEPT_MAX * 3; i++) {
      expect(hostOf(`https://h${i % 7}.example.com/orders/${i}`)).toBe(`h${i % 7}.example.com`);
      expect(hostsKeptCount()).toBeLessThanOrEqual(HOSTS_KEPT_MAX);
    }
    expect(hostsKeptCount()).toBeGreaterThan(0);
  });

  it('rejects what is not a URL, as parsing it did', () => {
    expect(() => hostOf('not a url')).toThrow(TypeError);
  });
});
