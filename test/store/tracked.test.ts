/**
 * store/tracked.ts: every store call is reported to the runtime's `track`
 * (a test runtime's, or a custom runtime's: `Runtime.track` is public), so
 * virtual time never moves while a store call is outstanding; with the
 * system runtime the store is used as is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, memoryStore, type OncelyClient, type OperationRecord, type Runtime } from '../../src/index.js';
import { systemRuntime } from '../../src/runtime.js';
import { sampleRecord } from '../../src/store/contract.js';
import { packedListings } from '../../src/store/packed-listing.js';
import type { PackedSummaries } from '../../src/store/packed-summaries.js';
import { trackedStore } from '../../src/store/tracked.js';
import { type OperationStore, storeContract } from '../../src/store.js';
import { createFakeRuntime, type ReferenceServer, startReferenceServer } from '../../src/testing.js';

let server: ReferenceServer | undefined;
const clients: OncelyClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

/** A `track` that records what it was given and how many calls are outstanding. */
function recordingTrack() {
  const seen: Promise<unknown>[] = [];
  let outstanding = 0;
  const track = <T>(work: Promise<T>): Promise<T> => {
    seen.push(work);
    outstanding++;
    return work.finally(() => {
      outstanding--;
    });
  };
  return { seen, track, outstanding: () => outstanding };
}

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Lets every real task queued so far run (the store calls are real promises, not timers). */
const realTurns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('a tracked store passes the store contract', () => {
  const { track } = recordingTrack();
  for (const c of storeContract({ create: () => trackedStore(memoryStore(), { track }) })) it(c.name, c.run);
});

describe('trackedStore', () => {
  it('with the system runtime, is the store itself', () => {
    const store = memoryStore();
    expect(trackedStore(store, systemRuntime)).toBe(store);
  });

  it('reports each call, as the store started it, until it settles', async () => {
    const t = recordingTrack();
    const inner = memoryStore();
    const held = gate();
    const started: Promise<unknown>[] = [];
    const store: OperationStore = {
      ...inner,
      put: (record, options) => {
        const work = held.opened.then(() => inner.put(record, options));
        started.push(work);
        return work;
      },
    };
    const tracked = trackedStore(store, { track: t.track });
    const put = tracked.put(sampleRecord('k1'));
    // Started at once, not in a later microtask: a store may order calls as they come.
    expect(started).toHaveLength(1);
    expect(t.seen).toEqual(started);
    expect(t.outstanding()).toBe(1);
    held.open();
    await put;
    expect(t.outstanding()).toBe(0);
    expect((await tracked.get('k1'))?.key).toBe('k1');
    await tracked.list();
    await tracked.quarantined();
    await tracked.delete('k1');
    expect(t.seen).toHaveLength(5);
  });

  it('reports the optional calls a store has, and leaves out the ones it lacks', async () => {
    const t = recordingTrack();
    const inner = memoryStore();
    const calls: string[] = [];
    const store: OperationStore = {
      ...inner,
      listSummaries: async () => {
        calls.push('listSummaries');
        return [];
      },
      claimDue: async () => {
        calls.push('claimDue');
        return [];
      },
      close: async () => {
        calls.push('close');
      },
    };
    const tracked = trackedStore(store, { track: t.track });
    await tracked.listSummaries?.({});
    await tracked.claimDue?.({ owner: 'o', leaseMs: 1, limit: 1 } as Parameters<
      NonNullable<OperationStore['claimDue']>
    >[0]);
    await tracked.close?.();
    expect(calls).toEqual(['listSummaries', 'claimDue', 'close']);
    expect(t.seen).toHaveLength(3);
    const bare = trackedStore(memoryStore(), { track: t.track });
    expect(bare.claimDue).toBeUndefined();
    expect(bare.listSummaries).toBeUndefined();
  });

  it('turns a store call that throws at once into a tracked rejection', async () => {
    const t = recordingTrack();
    const store: OperationStore = {
      ...memoryStore(),
      get: () => {
        throw new Error('store is gone');
      },
    };
    const got = trackedStore(store, { track: t.track }).get('k');
    expect(t.seen).toHaveLength(1);
    await expect(got).rejects.toThrow('store is gone');
  });

  it('subscribes to quarantine reports at once, untracked, and a failure to subscribe throws there', () => {
    const t = recordingTrack();
    const reports: string[] = [];
    const inner = memoryStore();
    const tracked = trackedStore(inner, { track: t.track });
    const off = tracked.onQuarantine((entry) => reports.push(entry.id));
    expect(typeof off).toBe('function');
    expect(t.seen).toHaveLength(0);
    const refusing: OperationStore = {
      ...inner,
      onQuarantine: () => {
        throw new Error('no subscriptions');
      },
    };
    expect(() => trackedStore(refusing, { track: t.track }).onQuarantine(() => undefined)).toThrow('no subscriptions');
  });

  it('calls a class-based store with itself as `this` (its private fields work)', async () => {
    const t = recordingTrack();
    class Counting implements OperationStore {
      readonly #inner = memoryStore();
      #gets = 0;
      get gets(): number {
        return this.#gets;
      }
      get(key: string) {
        this.#gets++;
        return this.#inner.get(key);
      }
      put(record: OperationRecord) {
        return this.#inner.put(record);
      }
      update(...args: Parameters<OperationStore['update']>) {
        return this.#inner.update(...args);
      }
      delete(key: string) {
        return this.#inner.delete(key);
      }
      list() {
        return this.#inner.list();
      }
      quarantined() {
        return this.#inner.quarantined();
      }
      onQuarantine(fn: Parameters<OperationStore['onQuarantine']>[0]) {
        return this.#inner.onQuarantine(fn);
      }
    }
    const store = new Counting();
    const tracked = trackedStore(store, { track: t.track }) as Counting;
    await tracked.put(sampleRecord('c1'));
    expect((await tracked.get('c1'))?.key).toBe('c1');
    expect(tracked.gets).toBe(1);
    tracked.onQuarantine(() => undefined);
    expect(t.seen).toHaveLength(2);
  });

  it('wraps a store once per `track`: the browser client and the core both wrap the same store', async () => {
    const t = recordingTrack();
    const once = trackedStore(memoryStore(), { track: t.track });
    expect(trackedStore(once, { track: t.track })).toBe(once);
    // Another runtime object with the same `track` (the core spreads the options' runtime into its own).
    expect(trackedStore(once, { ...systemRuntime, track: t.track })).toBe(once);
    await once.list();
    expect(t.seen).toHaveLength(1);
    const other = recordingTrack();
    expect(trackedStore(once, { track: other.track })).not.toBe(once);
  });

  it("passes on the store's packed listing, tracked", async () => {
    const t = recordingTrack();
    const store = memoryStore();
    const packed = {} as PackedSummaries;
    packedListings.set(store, async () => packed);
    const tracked = trackedStore(store, { track: t.track });
    const listing = packedListings.get(tracked);
    expect(listing).toBeDefined();
    expect(await listing?.({})).toBe(packed);
    expect(t.seen).toHaveLength(1);
  });
});

describe('a client reports its store calls to the runtime', () => {
  it("a custom runtime's own `track` is given every store call of a send", async () => {
    server = await startReferenceServer();
    const t = recordingTrack();
    const inner = memoryStore();
    const storeCalls: Promise<unknown>[] = [];
    const store = new Proxy(inner, {
      get(target, name) {
        const value = Reflect.get(target, name);
        if (typeof value !== 'function' || name === 'onQuarantine') return value;
        return (...args: unknown[]) => {
          const work = value.apply(target, args) as Promise<unknown>;
          storeCalls.push(work);
          return work;
        };
      },
    });
    const runtime: Partial<Runtime> = { track: t.track };
    const client = createClient({ baseUrl: server.url, store, runtime });
    clients.push(client);
    const result = await client.send({ method: 'POST', url: '/payments', key: 'pay-1', json: { amount: 1 } });
    expect(result.status).toBe(201);
    expect(storeCalls.length).toBeGreaterThanOrEqual(2);
    for (const call of storeCalls) expect(t.seen).toContain(call);
  });

  it('the fake runtime moves no virtual time while a store call is outstanding', async () => {
    const rt = createFakeRuntime();
    const inner = memoryStore({ now: rt.now });
    const held = gate();
    let listsStarted = 0;
    const order: string[] = [];
    const store: OperationStore = {
      ...inner,
      // A listing outside any send (the write-ahead is tracked as a whole by admission): only the store's own tracking covers it.
      list: async (filter) => {
        if (++listsStarted === 2) {
          await held.opened;
          order.push('listed');
        }
        return inner.list(filter);
      },
    };
    const client = createClient({ store, runtime: rt });
    clients.push(client);
    // The client's parts built first: their module loads are tracked too, and would hide an untracked store call.
    await rt.run(client.list());
    const listed = client.list();
    const timer = rt.sleep(60_000).then(() => order.push('timer'));
    const running = rt.run(Promise.all([listed, timer]));
    await realTurns(5);
    expect(listsStarted).toBe(2);
    // Plenty of real turns with the listing held: an untracked call would let `run` fire the timer now.
    await realTurns(20);
    expect(rt.busy).toBe(1);
    expect(order).toEqual([]);
    held.open();
    await running;
    expect(order).toEqual(['listed', 'timer']);
  });
});
