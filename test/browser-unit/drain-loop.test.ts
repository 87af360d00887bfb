/**
 * The drain loop on its own, as a service worker would use it: no
 * `document`, `window` or `localStorage`, every input a fake (virtual
 * time, a memory store, a wake source, a connectivity, an election), the
 * core client replaced by a `resume` that records its calls.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDrainLoop, type DrainEvents, type DrainLoop, type WakeSource } from '../../src/browser/drain-loop.js';
import { electLeader, type Leadership } from '../../src/browser/leader.js';
import { emptySummary, type ResumeSummary } from '../../src/flow/calls/resume.js';
import { Shutdown } from '../../src/flow/engine/shutdown.js';
import type { OperationRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store/contract.js';
import { memoryStore } from '../../src/store/memory.js';
import type { OperationStore } from '../../src/store/store.js';
import { trackedStore } from '../../src/store/tracked.js';
import { createFakeRuntime, type FakeRuntime } from '../../src/testing/fake-runtime.js';
import { FakeLocks } from './fakes.js';

const INTERVAL_MS = 60_000;

/** A wake source the test fires by hand. */
function manualWake(): { source: WakeSource; fire(): void; listeners(): number } {
  const listeners = new Set<() => void>();
  return {
    source: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    fire: () => {
      for (const fn of [...listeners]) fn();
    },
    listeners: () => listeners.size,
  };
}

/** A connectivity whose online/offline changes the test announces. */
function manualConnectivity(): {
  onChange(fn: (online: boolean) => void): () => void;
  set(online: boolean): void;
} {
  const listeners = new Set<(online: boolean) => void>();
  return {
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    set(online) {
      for (const fn of [...listeners]) fn(online);
    },
  };
}

interface Rig {
  rt: FakeRuntime;
  store: OperationStore;
  loop: DrainLoop;
  closed: Shutdown;
  wake: ReturnType<typeof manualWake>;
  connectivity: ReturnType<typeof manualConnectivity>;
  /** `due` of every `drain:pass`, in order. */
  passes: number[];
  resumes: number;
  intervals: number;
  errors: unknown[];
}

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function rig(
  options: {
    leadership?: Leadership;
    owner?: string;
    concurrency?: number;
    resume?: (loop: DrainLoop) => Promise<ResumeSummary>;
    /** A client that has already closed (the browser client loads the loop lazily: it may arrive late). */
    closed?: Shutdown;
  } = {},
): Rig {
  const rt = createFakeRuntime({ seed: 3 });
  const store = trackedStore(memoryStore({ now: rt.now }), rt);
  const closed = options.closed ?? new Shutdown();
  closers.push(() => closed.stop());
  const wake = manualWake();
  const connectivity = manualConnectivity();
  const events: DrainEvents = {
    emit(event, payload) {
      if (event === 'drain:pass') state.passes.push((payload as { due: number }).due);
      else state.errors.push(payload);
    },
  };
  const state: Rig = {
    rt,
    store,
    closed,
    wake,
    connectivity,
    passes: [],
    resumes: 0,
    intervals: 0,
    errors: [],
    loop: createDrainLoop({
      store,
      runtime: rt,
      owner: options.owner ?? 'worker-1',
      leadership: options.leadership ?? electLeader({ name: 'oncely:drainer:sw', locks: undefined }),
      connectivity,
      wake: wake.source,
      concurrency: options.concurrency ?? 4,
      intervalMs: INTERVAL_MS,
      sendable: () => true,
      kick: () => undefined,
      nextChange: () => rt.sleep(1_000),
      resume: async () => {
        state.resumes++;
        return options.resume === undefined ? emptySummary() : options.resume(state.loop);
      },
      onInterval: async () => {
        state.intervals++;
      },
      events,
      closed,
    }),
  };
  return state;
}

describe('createDrainLoop', () => {
  it('runs where there is no DOM: drains at start, when woken, back online, and periodically; stops when closed', async () => {
    // What a service worker lacks; the loop must not reach for any of it.
    expect((globalThis as { document?: unknown }).document).toBeUndefined();
    expect((globalThis as { window?: unknown }).window).toBeUndefined();
    expect((globalThis as { localStorage?: unknown }).localStorage).toBeUndefined();

    const r = rig();
    await r.store.put(sampleRecord('op-1'));
    r.loop.start();
    await r.rt.advance(0);
    expect(r.passes).toEqual([1]);
    expect(r.resumes).toBe(1);

    // Woken: one pass soon after, shared by a burst of hints.
    r.wake.fire();
    r.wake.fire();
    r.wake.fire();
    await r.rt.advance(50);
    expect(r.passes).toEqual([1, 1]);
    expect(r.resumes).toBe(2);

    // Going offline starts nothing; coming back online does.
    r.connectivity.set(false);
    await r.rt.advance(50);
    expect(r.passes).toHaveLength(2);
    r.connectivity.set(true);
    await r.rt.advance(50);
    expect(r.passes).toHaveLength(3);

    // Nothing due: the pass is reported, the core is not asked.
    await r.store.delete('op-1');
    r.wake.fire();
    await r.rt.advance(50);
    expect(r.passes).toEqual([1, 1, 1, 0]);
    expect(r.resumes).toBe(3);

    // The periodic pass, then the caller's housekeeping.
    await r.store.put(sampleRecord('op-2'));
    await r.rt.advance(INTERVAL_MS);
    expect(r.passes).toEqual([1, 1, 1, 0, 1]);
    expect(r.intervals).toBe(1);

    // Closed: its timers and subscriptions are gone; no hint or interval drains any more.
    r.closed.stop();
    expect(r.wake.listeners()).toBe(0);
    expect(r.rt.pendingTimers).toBe(0);
    r.wake.fire();
    r.connectivity.set(true);
    r.loop.schedule();
    await r.rt.advance(3 * INTERVAL_MS);
    expect(await r.loop.drain(true)).toEqual(emptySummary());
    expect(r.passes).toHaveLength(5);
    expect(r.resumes).toBe(4);
    expect(r.intervals).toBe(1);
    expect(r.errors).toEqual([]);
  });

  it('created after its client closed (a lazy load that arrived late): subscribes to nothing, never drains', async () => {
    const closed = new Shutdown();
    closed.stop();
    const r = rig({ closed });
    await r.store.put(sampleRecord('op-1'));
    expect(r.wake.listeners()).toBe(0);
    r.loop.start();
    r.wake.fire();
    r.connectivity.set(true);
    await r.rt.advance(3 * INTERVAL_MS);
    expect(r.rt.pendingTimers).toBe(0);
    expect(r.passes).toEqual([]);
    expect(r.resumes).toBe(0);
    expect(r.errors).toEqual([]);
  });

  it('claims slots: the dispatches of one pass run at most `concurrency` at once, each record once', async () => {
    let running = 0;
    let peak = 0;
    const sent: string[] = [];
    const r = rig({
      concurrency: 2,
      resume: async (loop) => {
        const due = await r.store.list({ state: ['pending'] });
        await Promise.all(
          due.map((record) =>
            loop.dispatch(record.key, async () => {
              running++;
              peak = Math.max(peak, running);
              await r.rt.sleep(100);
              running--;
              sent.push(record.key);
              const done: OperationRecord = { ...record, state: 'succeeded' };
              await r.store.put(done);
              return done;
            }),
          ),
        );
        return emptySummary();
      },
    });
    for (const key of ['a', 'b', 'c', 'd', 'e']) await r.store.put(sampleRecord(key));
    r.loop.start();
    // Rounds of two, two and one, 100 ms each: the slots are the limit, not the loop.
    await r.rt.advance(150);
    expect(sent).toHaveLength(2);
    await r.rt.advance(100);
    expect(sent).toHaveLength(4);
    await r.rt.advance(100);
    expect(sent.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(peak).toBe(2);
    expect(r.passes).toEqual([5]);
  });

  it('with an election: drains only while it leads, and fences a lease held by another owner', async () => {
    const locks = new FakeLocks();
    const holder = electLeader({ name: 'oncely:drainer:sw', locks: locks.forTab(1) });
    await locks.settled();
    const leadership = electLeader({ name: 'oncely:drainer:sw', locks: locks.forTab(2) });
    const r = rig({ leadership, owner: 'worker-2' });
    // An attempt another context had started: its lease is stale once we lead.
    await r.store.put(
      sampleRecord('leased', { state: 'in_flight', lease: { owner: 'page-1', until: r.rt.now() + 3_600_000 } }),
    );
    r.loop.start();
    r.wake.fire();
    await r.rt.advance(50);
    expect(leadership.isLeader()).toBe(false);
    expect(r.passes).toEqual([]);

    await holder.release();
    await locks.settled();
    await r.rt.advance(50);
    expect(leadership.isLeader()).toBe(true);
    expect(r.passes).toEqual([1]);
    expect(r.resumes).toBe(1);
    const fenced = await r.store.get('leased');
    expect(fenced?.epoch).toBe(1);
    r.closed.stop();
    await leadership.release();
  });

  it('without an election (leases mode) a live lease of another owner is not due until it expires', async () => {
    const r = rig();
    const until = r.rt.now() + 30_000;
    await r.store.put(sampleRecord('leased', { state: 'in_flight', lease: { owner: 'page-1', until } }));
    r.loop.start();
    await r.rt.advance(0);
    expect(r.passes).toEqual([0]);
    expect((await r.store.get('leased'))?.epoch).toBe(0);
    // The periodic pass (plus the 10 ms a pass waits for company) after the lease has run out.
    await r.rt.advance(INTERVAL_MS + 50);
    expect(r.passes).toEqual([0, 1]);
    expect(r.resumes).toBe(1);
  });
});
