/**
 * createServiceWorkerDrainer with a fake worker scope (no IndexedDB is
 * touched on these paths): options fail at construction naming the field,
 * the handlers it wires, and the wake-ups that leave the queue to a page
 * (lock held) or to later (offline). Draining itself runs in Chromium
 * (test/browser/service-worker.browser.test.ts).
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { DrainReport, ServiceWorkerScopeLike } from '../../src/service-worker.js';
import { createServiceWorkerDrainer, InvalidOptionsError } from '../../src/service-worker.js';

type Listener = (event: {
  tag?: string;
  data?: unknown;
  lastChance?: boolean;
  waitUntil(p: Promise<unknown>): void;
}) => void;

/**
 * `lockHeld`: the drainer lock is taken (a callback asked for it `ifAvailable` gets null). `holder`: who
 * holds it — a page (the worker lists a window client) or a stopped worker (it lists no client at all);
 * without it the scope has no `clients`, and the holder is taken to be a page.
 */
function fakeScope(options: { onLine?: boolean; lockHeld?: boolean; holder?: 'page' | 'stopped worker' } = {}) {
  const listeners = new Map<string, Listener[]>();
  const posted: unknown[] = [];
  class Channel {
    onmessage: ((event: MessageEvent) => void) | null = null;
    postMessage(message: unknown): void {
      posted.push(message);
    }
    close(): void {}
  }
  const scope = {
    addEventListener(type: string, listener: Listener) {
      listeners.set(type, [...(listeners.get(type) ?? []), listener]);
    },
    navigator: {
      onLine: options.onLine ?? true,
      locks: {
        request: async (_name: string, _options: unknown, callback: (lock: unknown) => Promise<unknown>) =>
          callback(options.lockHeld === true ? null : {}),
      },
    },
    BroadcastChannel: Channel,
    ...(options.holder === undefined
      ? {}
      : { clients: { matchAll: async () => (options.holder === 'page' ? [{ type: 'window' }] : []) } }),
  } as unknown as ServiceWorkerScopeLike;
  const fire = (type: string, event: { tag?: string; data?: unknown; lastChance?: boolean }): Promise<unknown>[] => {
    const kept: Promise<unknown>[] = [];
    for (const listener of listeners.get(type) ?? []) listener({ ...event, waitUntil: (p) => kept.push(p) });
    return kept;
  };
  return { scope, listeners, posted, fire };
}

describe('createServiceWorkerDrainer', () => {
  it.each([
    [{ budgetMs: 0 }, 'budgetMs'],
    [{ concurrency: 1.5 }, 'concurrency'],
    [{ database: '' }, 'database'],
    [{ user: 'u1' }, 'user'],
    [{ periodicSync: 'yes' }, 'periodicSync'],
    [{ leaseMs: -1 }, 'leaseMs'],
    [{ policy: { maxAttempts: 0 } }, 'policy.maxAttempts'],
    [{ budgetMS: 1 }, 'budgetMS'],
  ])('refuses %j at construction, naming %s', (options, field) => {
    const { scope } = fakeScope();
    let error: unknown;
    try {
      createServiceWorkerDrainer({ scope, ...(options as object) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toContain(field);
  });

  it('listens to sync and message (and periodicsync only when asked), for its own tag', () => {
    const plain = fakeScope();
    const drainer = createServiceWorkerDrainer({ scope: plain.scope, database: 'shop' });
    expect(drainer.tag).toBe('oncely:shop');
    expect(drainer.owner).toMatch(/^service-worker:/);
    expect([...plain.listeners.keys()].sort()).toEqual(['message', 'sync']);
    expect(plain.fire('sync', { tag: 'other' })).toEqual([]);
    expect(plain.fire('message', { data: { type: 'oncely:drain', database: 'other' } })).toEqual([]);
    const periodic = fakeScope();
    createServiceWorkerDrainer({ scope: periodic.scope, database: 'shop', periodicSync: true });
    expect([...periodic.listeners.keys()].sort()).toEqual(['message', 'periodicsync', 'sync']);
  });

  it('leaves the queue to the page holding the drainer lock, and tells it to look now', async () => {
    const { scope, posted, fire } = fakeScope({ lockHeld: true });
    const reports: DrainReport[] = [];
    const drainer = createServiceWorkerDrainer({ scope, database: 'shop', onDrain: (r) => reports.push(r) });
    const [kept] = fire('sync', { tag: 'oncely:shop' });
    await kept;
    expect(reports.map((r) => [r.reason, r.outcome])).toEqual([['sync', 'busy']]);
    expect(posted).toEqual([{ type: 'kick', from: drainer.owner }]);
    const [asked] = fire('message', { data: { type: 'oncely:drain', database: 'shop' } });
    await expect(asked).resolves.toMatchObject({ reason: 'message', outcome: 'busy' });
  });

  it('a sync finding the lock taken with no page open (a worker the browser stopped, not yet let go) waits for it, then drains', async () => {
    const { scope, posted, fire } = fakeScope({ lockHeld: true, holder: 'stopped worker' });
    const clock = fakeClock();
    // The browser takes the stopped worker's lock back 300 ms after the sync fired.
    let grantedAtMs: number | undefined;
    clock.at(300, () => {
      (scope.navigator?.locks as { request: unknown }).request = async (
        _name: string,
        _options: unknown,
        callback: (lock: unknown) => Promise<unknown>,
      ) => {
        grantedAtMs ??= clock.nowMs();
        return callback({});
      };
    });
    const reports: DrainReport[] = [];
    createServiceWorkerDrainer({ scope, database: 'shop', runtime: clock.runtime, onDrain: (r) => reports.push(r) });
    const [kept] = fire('sync', { tag: 'oncely:shop' });
    await expect(kept).resolves.toBeUndefined();
    expect(reports.map((r) => [r.reason, r.outcome])).toEqual([['sync', 'drained']]);
    // Asked again every 100 ms: granted at the first ask after it was let go.
    expect(grantedAtMs).toBe(300);
    expect(posted).toEqual([]);
  });

  it('a sync finding the lock taken while a page is open leaves the queue to it at once, as without the client list', async () => {
    const { scope, posted, fire } = fakeScope({ lockHeld: true, holder: 'page' });
    const clock = fakeClock();
    const reports: DrainReport[] = [];
    const drainer = createServiceWorkerDrainer({
      scope,
      database: 'shop',
      runtime: clock.runtime,
      onDrain: (r) => reports.push(r),
    });
    const [kept] = fire('sync', { tag: 'oncely:shop' });
    await expect(kept).resolves.toBeUndefined();
    expect(reports.map((r) => [r.reason, r.outcome, r.budgetSpent])).toEqual([['sync', 'busy', false]]);
    expect(clock.nowMs()).toBe(0);
    expect(posted).toEqual([{ type: 'kick', from: drainer.owner }]);
  });

  it('a lock taken with no page open for the whole budget fails the sync, so the browser fires it again', async () => {
    const { scope, posted, fire } = fakeScope({ lockHeld: true, holder: 'stopped worker' });
    const clock = fakeClock();
    const reports: DrainReport[] = [];
    createServiceWorkerDrainer({
      scope,
      database: 'shop',
      budgetMs: 2_000,
      runtime: clock.runtime,
      onDrain: (r) => reports.push(r),
    });
    const [kept] = fire('sync', { tag: 'oncely:shop' });
    await expect(kept).rejects.toThrow(/held with no page open for 2000 ms; asking for another sync/);
    expect(reports.map((r) => [r.reason, r.outcome, r.budgetSpent])).toEqual([['sync', 'busy', true]]);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(2_000);
    expect(posted).toEqual([]);
    // A message is not a sync: it does not wait for the lock.
    const [asked] = fire('message', { data: { type: 'oncely:drain', database: 'shop' } });
    await expect(asked).resolves.toMatchObject({ reason: 'message', outcome: 'busy', budgetSpent: false });
  });

  it('a call or a message does nothing while the browser says offline', async () => {
    const { scope, posted, fire } = fakeScope({ onLine: false });
    const drainer = createServiceWorkerDrainer({ scope, database: 'shop' });
    await expect(drainer.drain()).resolves.toMatchObject({ reason: 'call', outcome: 'offline', left: 0 });
    const [asked] = fire('message', { data: { type: 'oncely:drain', database: 'shop' } });
    await expect(asked).resolves.toMatchObject({ reason: 'message', outcome: 'offline' });
    expect(posted).toEqual([]);
  });

  it('a sync fired while the worker still says offline waits for it to say online, then drains', async () => {
    const { scope, posted, fire } = fakeScope({ onLine: false, lockHeld: true });
    const clock = fakeClock();
    // The worker's navigator catches up with the browser's sync 300 ms later.
    clock.at(300, () => {
      (scope.navigator as { onLine: boolean }).onLine = true;
    });
    const reports: DrainReport[] = [];
    const drainer = createServiceWorkerDrainer({
      scope,
      database: 'shop',
      runtime: clock.runtime,
      onDrain: (r) => reports.push(r),
    });
    const [kept] = fire('sync', { tag: 'oncely:shop' });
    await expect(kept).resolves.toBeUndefined();
    expect(reports.map((r) => [r.reason, r.outcome])).toEqual([['sync', 'busy']]);
    expect(posted).toEqual([{ type: 'kick', from: drainer.owner }]);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(300);
    expect(clock.nowMs()).toBeLessThan(1_000);
  });

  it('a sync that stays offline for its whole budget fails its event, so the browser fires it again', async () => {
    const { scope, posted, fire } = fakeScope({ onLine: false, lockHeld: true });
    const clock = fakeClock();
    const reports: DrainReport[] = [];
    createServiceWorkerDrainer({
      scope,
      database: 'shop',
      budgetMs: 5_000,
      runtime: clock.runtime,
      onDrain: (r) => reports.push(r),
    });
    const [kept] = fire('sync', { tag: 'oncely:shop' });
    await expect(kept).rejects.toThrow(/still offline after 5000 ms; asking for another sync/);
    expect(reports.map((r) => [r.reason, r.outcome])).toEqual([['sync', 'offline']]);
    expect(clock.nowMs()).toBeGreaterThanOrEqual(5_000);
    expect(posted).toEqual([]);
    // The browser's last chance is not failed: nothing would come after it.
    const [last] = fire('sync', { tag: 'oncely:shop', lastChance: true });
    await expect(last).resolves.toBeUndefined();
  });
});

/** A clock that moves only when the code under test sleeps, with actions at chosen times. */
function fakeClock() {
  let nowMs = 0;
  const actions: Array<{ atMs: number; run: () => void }> = [];
  const runtime = {
    now: () => nowMs,
    sleep: async (ms: number) => {
      nowMs += ms;
      for (const action of actions.filter((a) => a.atMs <= nowMs)) {
        actions.splice(actions.indexOf(action), 1);
        action.run();
      }
    },
  };
  return {
    runtime,
    nowMs: () => nowMs,
    at: (atMs: number, run: () => void) => actions.push({ atMs, run }),
  };
}
