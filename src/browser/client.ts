/**
 * The browser client: an offline queue that sends each operation once,
 * across reloads and tabs. A composition over the core client:
 *
 *   core client (write-ahead, loop, scopes, 401 refresh)
 *     + IndexedDB store (default)
 *     + connectivity (connectivity.ts, watched-fetch.ts): no attempt while offline or unreachable
 *     + drainer election (leader.ts), drain loop (drain-loop.ts) and dispatch (drainer.ts): one tab sends
 *     + tab channel (channel.ts): kicks, settlements, changes between tabs
 *     + storage (storage-watch.ts, persistence.ts): persist(), wipe detection
 *     + live view (subscribe.ts): snapshots for UIs
 *     + clear() (clear.ts): a user's queue removed without racing the loop
 *
 * This file only wires them: which browser event or tab message reaches
 * which part. The parts read no browser global themselves (env.ts does).
 *
 * Who sends: in "locks" mode only the tab holding the drainer lock. Every
 * other tab writes its operations ahead and waits; its `send()` and
 * `enqueue().settled` resolve when the drainer has settled the operation
 * (announced over the channel, or found by polling the store). This keeps
 * "one sender" a property of one lock, not of timing: a follower never
 * runs the loop, so it can never race the drainer.
 */
import { createClient, type Enqueued, type OncelyClient, type SendResult } from '../client.js';
import type { OncelyEventName, OncelyEvents } from '../events.js';
import type { OncelyRequest } from '../flow/operation.js';
import { Shutdown } from '../flow/shutdown.js';
import type { OperationRecord } from '../model.js';
import { type Runtime, systemRuntime } from '../runtime.js';
import { indexedDbStore } from '../store/indexeddb.js';
import { trackedStore } from '../store/tracked.js';
import { openTabChannel, type TabMessage } from './channel.js';
import { type ClearOptions, type ClearResult, clearOperations } from './clear.js';
import { browserConnectivity } from './connectivity.js';
import { createDrainLoop } from './drain-loop.js';
import { globalEnv } from './env.js';
import {
  BROWSER_ONLY_EVENTS,
  BrowserEmitter,
  type BrowserEventName,
  type BrowserListener,
  type BrowserOnlyEvents,
} from './events.js';
import { Hints } from './hints.js';
import { electLeader } from './leader.js';
import { type BrowserClientOptions, browserSettings } from './options.js';
import { StorageWatch } from './storage-watch.js';
import { type ClientStatus, LiveView, type SubscribeOptions, type Subscriber } from './subscribe.js';
import { Wakeups } from './wakeups.js';
import { watchedFetch } from './watched-fetch.js';

export type { ClearOptions, ClearResult } from './clear.js';
export type { BrowserClientOptions } from './options.js';

export interface BrowserClient extends Omit<OncelyClient, 'on'> {
  /** Core events of this tab, plus the browser's (`leader:changed`, `connectivity:changed`, `store:wiped`, …). */
  on<E extends BrowserEventName>(event: E, fn: BrowserListener<E>): () => void;
  /**
   * A live view of the queue for UIs, across tabs: `fn` gets a snapshot now
   * and again whenever what it shows changes. Returns an unsubscribe.
   */
  subscribe(fn: Subscriber, options?: SubscribeOptions): () => void;
  /** Removes the user's queued operations (e.g. on logout); those in flight stay and settle. */
  clear(options?: ClearOptions): Promise<ClearResult>;
  status(): ClientStatus;
  /** Resolves when start-up (wipe check, persistence, first drain) has run. Never rejects. */
  readonly ready: Promise<void>;
  /** This tab's lease owner id. */
  readonly owner: string;
}

const CORE_EVENTS: readonly OncelyEventName[] = [
  'enqueued',
  'attempt:started',
  'attempt:ended',
  'retry:scheduled',
  'held',
  'settled',
  'quarantined',
];
/**
 * @example
 * import { createBrowserClient } from 'oncely/browser';
 * const payments = createBrowserClient({
 *   baseUrl: 'https://api.example.com',
 *   user: () => session.userId,
 *   headers: async () => ({ authorization: `Bearer ${await session.token()}` }),
 *   onUnauthorized: () => session.refresh(),
 *   persist: true,
 * });
 * const { settled } = await payments.enqueue({ url: '/payments', json: { amount: 4800 }, scope: 'cart-9' });
 */
export function createBrowserClient(options: BrowserClientOptions = {}): BrowserClient {
  const { concurrency, drainIntervalMs, settlePollMs, recheckMs } = browserSettings(options);
  const {
    store: givenStore,
    database: givenDatabase,
    user,
    persist,
    onStoreWiped,
    concurrency: _c,
    drainIntervalMs: _d,
    settlePollMs: _s,
    recheckMs: _r,
    locks,
    env: givenEnv,
    ...coreOptions
  } = options;
  const env = givenEnv ?? globalEnv();
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const database = givenDatabase ?? 'oncely';
  const store = trackedStore(givenStore ?? indexedDbStore({ name: database, now: runtime.now }), runtime);
  const owner = options.owner ?? runtime.uuid();
  const closing = new Shutdown();
  const emitter = new BrowserEmitter();
  const currentUser = (): string | undefined => user?.();
  const sendable = (record: OperationRecord): boolean => user === undefined || record.meta?.userId === currentUser();
  const background = (during: string) => (error: unknown) => emitter.emit('background:error', { error, during });

  const leadership = electLeader({
    name: `oncely:drainer:${database}`,
    locks: locks === false ? undefined : env.navigator?.locks,
    onError: background('drainer election (falling back to leases)'),
  });
  const connectivity = browserConnectivity({ env, runtime, recheckMs });
  const wakeups = new Wakeups(runtime, settlePollMs, closing);
  const hints = new Hints();
  const channel = openTabChannel(env.BroadcastChannel, `oncely:${database}`, owner, onMessage);
  const storage = new StorageWatch({
    database,
    indexedDB: givenStore === undefined ? env.indexedDB : undefined,
    localStorage: env.localStorage,
    runtime,
    events: emitter,
    onStoreWiped,
    announce: (report) => channel.post({ type: 'wiped', from: owner, report }),
    changed: () => void live.refresh(),
  });

  const loop = createDrainLoop({
    store,
    runtime,
    owner,
    leadership,
    connectivity,
    wake: hints.source,
    concurrency,
    intervalMs: drainIntervalMs,
    sendable,
    kick: () => channel.post({ type: 'kick', from: owner }),
    nextChange: (key, signal) => wakeups.next(key, signal),
    resume: (resumeOptions) => core.resume(resumeOptions),
    onInterval: async () => {
      await storage.check();
      await core.sweep().catch(background('sweep'));
    },
    events: emitter,
    closed: closing,
  });

  const core = createClient({
    ...coreOptions,
    store,
    runtime,
    owner,
    fetch: watchedFetch(coreOptions.fetch, () => connectivity.reportUnreachable('transport_error')),
    connectivity,
    dispatch: loop.dispatch,
    // The drainer's slots are the limit; resume() hands every due operation to it at once.
    concurrency: Number.MAX_SAFE_INTEGER,
  });

  const live = new LiveView({ load: () => store.list(), status, currentUser, onError: background('live view') });

  function status(): ClientStatus {
    return {
      leader: leadership.isLeader(),
      mode: leadership.mode,
      online: connectivity.online(),
      storage: storage.status,
    };
  }

  // Every local event: tell the other tabs, refresh the live view, watch for an unreachable network.
  const unsubscribers: Array<() => void> = [];
  for (const name of CORE_EVENTS) {
    unsubscribers.push(
      core.on(name, (payload: OncelyEvents[typeof name]) => {
        channel.post({ type: 'event', from: owner, name, payload } as TabMessage);
        if (name === 'settled') wakeups.wake((payload as OncelyEvents['settled']).key);
        void live.refresh();
      }),
    );
  }
  unsubscribers.push(
    core.on('attempt:ended', (event) => {
      if (event.class === 'not_sent') connectivity.reportUnreachable('not_sent');
    }),
    connectivity.onChange((online, reason) => {
      emitter.emit('connectivity:changed', { online, reason });
      void live.refresh();
    }),
    leadership.onChange((leader) => {
      emitter.emit('leader:changed', { leader, mode: leadership.mode });
      wakeups.wakeAll();
      void live.refresh();
    }),
  );
  const onVisible = (): void => {
    if (env.document?.visibilityState !== 'visible') return;
    hints.fire();
    void storage.check();
    void live.refresh();
  };
  env.document?.addEventListener('visibilitychange', onVisible);

  function onMessage(message: TabMessage): void {
    switch (message.type) {
      case 'kick':
        hints.fire();
        break;
      case 'changed':
        wakeups.wakeAll();
        hints.fire();
        void live.refresh();
        break;
      case 'wiped':
        storage.report(message.report, false);
        break;
      case 'event':
        if (message.name === 'settled') wakeups.wake(message.payload.key);
        void live.refresh();
        break;
    }
  }

  async function start(): Promise<void> {
    await storage.check();
    if (persist === true) await storage.persist(env.navigator?.storage);
    loop.start();
  }

  const ready = start().catch(background('start-up'));

  function stamped<T>(request: OncelyRequest<T>): OncelyRequest<T> {
    const userId = currentUser();
    if (userId === undefined || typeof request !== 'object' || request === null) return request;
    if (request.meta?.userId !== undefined) return request;
    return { ...request, meta: { ...request.meta, userId } };
  }

  function announceChange(): void {
    channel.post({ type: 'changed', from: owner });
    wakeups.wakeAll();
    void live.refresh();
  }

  let closed: Promise<void> | undefined;

  return {
    owner,
    ready,
    send: <T>(request: OncelyRequest<T>): Promise<SendResult<T>> => core.send(stamped(request)),
    enqueue: <T>(request: OncelyRequest<T>): Promise<Enqueued<T>> => core.enqueue(stamped(request)),

    async resume(resumeOptions) {
      if (leadership.isLeader()) return loop.drain(true, resumeOptions);
      channel.post({ type: 'kick', from: owner });
      return core.resume(resumeOptions);
    },

    get: (key) => core.get(key),
    list: (filter) => core.list(filter),
    quarantined: () => core.quarantined(),
    retry: (key) => core.retry(key),

    async discard(key) {
      await core.discard(key);
      announceChange();
    },

    sweep: () => core.sweep(),
    policyFor: (method, url) => core.policyFor(method, url),

    on<E extends BrowserEventName>(event: E, fn: BrowserListener<E>): () => void {
      if ((BROWSER_ONLY_EVENTS as readonly string[]).includes(event)) {
        return emitter.on(event as keyof BrowserOnlyEvents, fn as BrowserListener<keyof BrowserOnlyEvents>);
      }
      return core.on(event as OncelyEventName, fn as BrowserListener<OncelyEventName>);
    },

    subscribe: (fn, subscribeOptions) => live.subscribe(fn, subscribeOptions),

    async clear(clearOptions?: ClearOptions): Promise<ClearResult> {
      const context = { store, now: runtime.now, perUser: user !== undefined, currentUser };
      const result = await clearOperations(context, clearOptions);
      announceChange();
      return result;
    },

    status,

    close() {
      closed ??= (async () => {
        closing.stop();
        env.document?.removeEventListener('visibilitychange', onVisible);
        for (const off of unsubscribers) off();
        // Loops stop (in-flight attempts finish and are recorded), leases are released...
        await core.close();
        // The core closes only stores it made; this one we made.
        if (givenStore === undefined) await store.close?.();
        connectivity.dispose();
        // ...and only then may another tab become the drainer.
        await leadership.release();
        channel.close();
      })();
      return closed;
    },
  };
}
