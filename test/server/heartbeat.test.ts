/**
 * Lease renewal: a handler that runs longer than its claim's lease is not
 * taken for dead. While it runs, its lease is renewed (every third of it,
 * on the guard's `schedule`), so a duplicate is told "in progress", never
 * "outcome unknown", and a `rerun: 'safe'` route does not run it twice.
 * Renewal is fenced by the epoch and stops on every path. Time is the
 * test's: the memory store's clock and the schedule move together.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Heartbeats } from '../../src/server/heartbeat.js';
import { type IdempotencyStore, memoryIdempotencyStore, PROBLEM_TYPES } from '../../src/server.js';
import { type App, post, type Style, startApp } from './fixture.js';
import { type ManualSchedule, manualSchedule } from './manual-schedule.js';

const LEASE_MS = 10_000;

interface Rig {
  app: App;
  timers: ManualSchedule;
  renewals: () => number;
  /** Moves the clock on by `ms` in steps of a tenth of the lease, firing the renewals due at each. */
  run(ms: number): Promise<void>;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.app.close();
  rig = undefined;
});

async function start(style: Style, renew: boolean): Promise<Rig> {
  const clock = { now: 1_000_000 };
  const timers = manualSchedule(clock);
  const store = memoryIdempotencyStore({ now: () => clock.now });
  let renewals = 0;
  const counted: IdempotencyStore = {
    claim: (r) => store.claim(r),
    complete: (c, r) => store.complete(c, r),
    renew: (c, ms) => {
      renewals += 1;
      return store.renew(c, ms);
    },
    release: (c) => store.release(c),
    abandon: (c) => store.abandon(c),
    sweep: () => store.sweep(),
  };
  const app = await startApp(style, {
    store: counted,
    advance: async (ms) => {
      clock.now += ms;
    },
    extra: { leaseMs: LEASE_MS, schedule: renew ? timers.schedule : () => () => undefined },
  });
  rig = {
    app,
    timers,
    renewals: () => renewals,
    async run(ms) {
      for (let left = ms; left > 0; left -= LEASE_MS / 10) {
        clock.now += Math.min(LEASE_MS / 10, left);
        await timers.fire(clock.now);
      }
    },
  };
  return rig;
}

describe.each<Style>(['fetch', 'connect'])('lease renewal (%s, memory store)', (style) => {
  it('a handler running for 5 leases is "in progress" to its duplicates, then replayed; renewal stops', async () => {
    const { app, run, renewals, timers } = await start(style, true);
    const gate = app.hold();
    const first = post(app, '/payments', { key: 'slow' });
    await gate.arrived;
    await run(5 * LEASE_MS);
    const duplicate = await post(app, '/payments', { key: 'slow' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.type).toBe(PROBLEM_TYPES.inProgress);
    expect(app.abandoned).toEqual([]);
    expect(renewals()).toBeGreaterThanOrEqual(10); // two to three a lease
    gate.release();
    expect((await first).status).toBe(201);
    const replay = await post(app, '/payments', { key: 'slow' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(app.effects).toHaveLength(1);
    const after = renewals();
    await run(3 * LEASE_MS);
    expect(renewals()).toBe(after);
    expect(timers.pending).toBe(0);
  });

  it("rerun 'safe': a duplicate of a handler still running is not run a second time", async () => {
    const { app, run } = await start(style, true);
    const gate = app.hold();
    const first = post(app, '/safe', { key: 'slow-safe' });
    await gate.arrived;
    await run(3 * LEASE_MS);
    const duplicate = await post(app, '/safe', { key: 'slow-safe' });
    expect(duplicate.json.type).toBe(PROBLEM_TYPES.inProgress);
    expect(app.effects).toHaveLength(1);
    gate.release();
    expect((await first).status).toBe(201);
  });

  it('without renewal (the control) the same wait makes the claim abandoned: the renewal is what keeps it', async () => {
    const { app, run, renewals } = await start(style, false);
    const gate = app.hold();
    const first = post(app, '/payments', { key: 'slow' });
    await gate.arrived;
    await run(2 * LEASE_MS);
    const duplicate = await post(app, '/payments', { key: 'slow' });
    expect(duplicate.json.type).toBe(PROBLEM_TYPES.outcomeUnknown);
    expect(renewals()).toBe(0);
    gate.release();
    await first;
  });

  it('a handler that throws stops its renewals too', async () => {
    const { app, run, renewals, timers } = await start(style, true);
    const gate = app.hold();
    const first = post(app, '/payments', { key: 'throws', body: { throw: true } });
    await gate.arrived;
    await run(LEASE_MS);
    expect(renewals()).toBeGreaterThan(0);
    gate.release();
    expect((await first).status).toBe(500);
    const after = renewals();
    await run(3 * LEASE_MS);
    expect(renewals()).toBe(after);
    expect(timers.pending).toBe(0);
  });
});

describe('Heartbeats', () => {
  it('renews about every third of the lease, and stops for a claim the store no longer lets it renew', async () => {
    const clock = { now: 0 };
    const timers = manualSchedule(clock);
    const owned = new Map([
      [1, true],
      [2, true],
    ]);
    const renewed: number[] = [];
    const store = {
      renew: async (claim: { epoch: number }) => {
        renewed.push(claim.epoch);
        return owned.get(claim.epoch) ?? false;
      },
    };
    const beats = new Heartbeats(store, timers.schedule, 6_000);
    const one = beats.start({ scope: 's', key: 'a', epoch: 1 }, 6_000);
    beats.start({ scope: 's', key: 'b', epoch: 2 }, 6_000);
    const tick = async () => {
      clock.now += 1_000;
      await timers.fire(clock.now);
    };
    await tick(); // 1 s: too soon for either
    expect(renewed).toEqual([]);
    await tick(); // 2 s: a third of the lease
    expect(renewed).toEqual([1, 2]);
    owned.set(2, false); // a newer epoch took b over
    await tick();
    await tick(); // 4 s
    expect(renewed).toEqual([1, 2, 1, 2]);
    expect(beats.running).toBe(1);
    beats.stop(one);
    expect(beats.running).toBe(0);
    await tick();
    await tick();
    expect(renewed).toEqual([1, 2, 1, 2]);
    expect(timers.pending).toBe(0);
  });

  it('a run that ends stops only its own renewals, whichever of the running ones it is; stopping twice is harmless', async () => {
    const clock = { now: 0 };
    const timers = manualSchedule(clock);
    const renewed: number[] = [];
    const beats = new Heartbeats(
      {
        renew: async (claim) => {
          renewed.push(claim.epoch);
          return true;
        },
      },
      timers.schedule,
      6_000,
    );
    const beatOf = (epoch: number) => beats.start({ scope: 's', key: 'k', epoch }, 6_000);
    const [first, second, third, fourth] = [beatOf(1), beatOf(2), beatOf(3), beatOf(4)];
    beats.stop(second);
    beats.stop(second);
    beats.stop(first);
    const fifth = beatOf(5);
    expect(beats.running).toBe(3);
    for (let tick = 0; tick < 2; tick++) {
      clock.now += 1_000;
      await timers.fire(clock.now);
    }
    expect(renewed.sort()).toEqual([3, 4, 5]);
    for (const beat of [third, fourth, fifth]) beats.stop(beat);
    expect(beats.running).toBe(0);
  });

  it('runs that start and end between ticks arm one timer, not one each; a tick with none running arms no next', async () => {
    const clock = { now: 0 };
    const timers = manualSchedule(clock);
    let scheduled = 0;
    const counted: typeof timers.schedule = (ms, fn) => {
      scheduled += 1;
      return timers.schedule(ms, fn);
    };
    const renewed: number[] = [];
    const beats = new Heartbeats(
      {
        renew: async (claim) => {
          renewed.push(claim.epoch);
          return true;
        },
      },
      counted,
      6_000,
    );
    for (let epoch = 1; epoch <= 1_000; epoch++) beats.stop(beats.start({ scope: 's', key: 'k', epoch }, 6_000));
    expect(scheduled).toBe(1);
    expect(beats.running).toBe(0);
    clock.now += 1_000;
    await timers.fire(clock.now); // the one tick: nothing runs, so nothing is renewed and no next tick is armed
    expect(timers.pending).toBe(0);
    expect(scheduled).toBe(1);
    const later = beats.start({ scope: 's', key: 'k', epoch: 1_001 }, 6_000); // a later run arms again
    expect(scheduled).toBe(2);
    for (let tick = 0; tick < 2; tick++) {
      clock.now += 1_000;
      await timers.fire(clock.now);
    }
    expect(renewed).toEqual([1_001]);
    beats.stop(later);
  });

  it('the memory store renews only the epoch that owns the key, before its outcome', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now });
    const request = {
      scope: 's',
      key: 'k',
      fingerprint: 'f',
      leaseMs: 1_000,
      retentionMs: 60_000,
      rerunAbandoned: true,
      atomic: false,
    };
    await store.claim(request);
    clock.now = 900;
    expect(await store.renew({ scope: 's', key: 'k', epoch: 1 }, 1_000)).toBe(true);
    clock.now = 1_500; // past the first lease, within the renewed one
    expect(await store.claim(request)).toMatchObject({ kind: 'in_progress', leaseRemainingMs: 400 });
    clock.now = 3_000;
    expect(await store.claim(request)).toMatchObject({ kind: 'claimed', epoch: 2 });
    expect(await store.renew({ scope: 's', key: 'k', epoch: 1 }, 1_000)).toBe(false);
    await store.complete({ scope: 's', key: 'k', epoch: 2 }, { status: 201, headers: [], body: new Uint8Array() });
    expect(await store.renew({ scope: 's', key: 'k', epoch: 2 }, 1_000)).toBe(false);
  });
});
