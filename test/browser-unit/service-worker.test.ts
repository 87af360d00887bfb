/**
 * createServiceWorkerDrainer with a fake worker scope (no IndexedDB is
 * touched on these paths): options fail at construction naming the field,
 * the handlers it wires, and the wake-ups that leave the queue to a page
 * (lock held) or to later (offline). Draining itself runs in Chromium
 * (test/browser/service-worker.browser.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { DrainReport, ServiceWorkerScopeLike } from '../../src/service-worker.js';
import { createServiceWorkerDrainer, InvalidOptionsError } from '../../src/service-worker.js';

type Listener = (event: { tag?: string; data?: unknown; waitUntil(p: Promise<unknown>): void }) => void;

function fakeScope(options: { onLine?: boolean; lockHeld?: boolean } = {}) {
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
  } as unknown as ServiceWorkerScopeLike;
  const fire = (type: string, event: { tag?: string; data?: unknown }): Promise<unknown>[] => {
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

  it('does nothing while the browser says offline (the sync fires again once online)', async () => {
    const { scope, posted } = fakeScope({ onLine: false });
    const drainer = createServiceWorkerDrainer({ scope, database: 'shop' });
    await expect(drainer.drain()).resolves.toMatchObject({ reason: 'call', outcome: 'offline', left: 0 });
    expect(posted).toEqual([]);
  });
});
