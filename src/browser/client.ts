/**
 * The browser client: an offline queue that sends each operation once,
 * across reloads and tabs. A composition over the core client:
 *
 *   core client (write-ahead, loop, scopes, 401 refresh)
 *     + IndexedDB store (default)
 *     + connectivity (connectivity.ts, watched-fetch.ts): no attempt while offline or unreachable
 *     + drainer election (leader.ts), drain loop (drain-loop.ts) and dispatch (drainer.ts): one tab sends
 *     + tab channel (channel.ts, tabs.ts): kicks, settlements, changes between tabs
 *     + storage (storage-watch.ts, persistence.ts): persist(), wipe detection
 *     + live view (subscribe.ts, wired by live.ts): snapshots for UIs
 *     + per-user queues (user.ts) and clear() (clear.ts)
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
import { createPlatformClient, type Enqueued, type SendResult } from '../client.js';
import { InvalidOptionsError } from '../errors.js';
import type { OncelyEvents } from '../events.js';
import { lazy } from '../flow/calls/lazy.js';
import { endLast } from '../flow/decide/attempt-history.js';
import { mayHaveTakenEffect } from '../flow/decide/decide.js';
import { revise } from '../flow/decide/revise.js';
import { Shutdown } from '../flow/engine/shutdown.js';
import type { OncelyRequest } from '../flow/request/operation.js';
import { countAttempts, isTerminal, OPERATION_STATES, writeOrder } from '../model/vocabulary.js';
import { type Runtime, systemRuntime } from '../runtime.js';
import { indexedDbStore } from '../store/indexeddb.js';
import { loadMemoryStore } from '../store/memory-load.js';
import { trackedStore } from '../store/tracked.js';
import type { BrowserClient } from './api.js';
import { backgroundSync } from './background-sync.js';
import { RELAYED_EVENTS } from './channel.js';
import type { ClearOptions, ClearResult } from './clear.js';
import { browserConnectivity } from './connectivity.js';
import { createDrainLoop, type DrainLoop } from './drain-loop.js';
import { globalEnv } from './env.js';
import { BrowserEmitter, listen } from './events.js';
import { Hints } from './hints.js';
import { electLeader } from './leader.js';
import { liveSubscriptions } from './live.js';
import { drainerLockName, syncTag } from './names.js';
import { type BrowserClientOptions, browserSettings } from './options.js';
import { StorageWatch } from './storage-watch.js';
import type { ClientStatus } from './subscribe.js';
import { TabSync } from './tabs.js';
import { userScope } from './user.js';
import { onVisible } from './visibility.js';
import { watchedFetch } from './watched-fetch.js';

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
 * const { settled } = await payments.enqueue({ method: 'POST', url: '/payments', json: { amount: 4800 }, scope: 'cart-9' });
 */
export function createBrowserClient(options: BrowserClientOptions = {}): BrowserClient {
  const settings = browserSettings(options);
  const { database } = settings;
  const givenStore = options.store;
  const env = options.env ?? globalEnv();
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const store = trackedStore(givenStore ?? indexedDbStore({ name: database, now: runtime.now }), runtime);
  const owner = options.owner ?? runtime.uuid();
  const closing = new Shutdown();
  const emitter = new BrowserEmitter();
  const users = userScope(options.user);
  const background = (during: string) => (error: unknown) => emitter.emit('background:error', { error, during });
  const views = liveSubscriptions(
    {
      load: () => store.list(),
      status,
      currentUser: users.current,
      onError: background('live view'),
      vocabulary: { countAttempts, OPERATION_STATES, writeOrder },
    },
    runtime,
  );
  const refresh = (): void => views.refresh();

  const leadership = electLeader({
    name: drainerLockName(database),
    locks: options.locks === false ? undefined : env.navigator?.locks,
    onError: background('drainer election (falling back to leases)'),
  });
  const connectivity = browserConnectivity({ env, runtime, recheckMs: settings.recheckMs });
  const hints = new Hints();
  const tabs = new TabSync({
    BroadcastChannel: env.BroadcastChannel,
    database,
    owner,
    runtime,
    settlePollMs: settings.settlePollMs,
    closed: closing,
    onKick: () => hints.fire(),
    onWiped: (report) => storage.report(report, false),
    onActivity: refresh,
  });
  const storage = new StorageWatch({
    database,
    indexedDB: givenStore === undefined ? env.indexedDB : undefined,
    localStorage: env.localStorage,
    runtime,
    events: emitter,
    onStoreWiped: options.onStoreWiped,
    announce: (report) => tabs.wiped(report),
    changed: refresh,
  });

  // The drain loop and dispatcher, built behind one promise. Every call that can make the core dispatch
  // waits for it first: a loop that failed to build then fails the call before anything is written ahead,
  // never a stored operation's dispatch (the caller would see an error for an operation the drainer sends
  // later). Bundled with the client, not loaded with `import()`: a page needs it before its first send.
  const loop: () => Promise<DrainLoop> = lazy(
    async () =>
      createDrainLoop({
        store,
        runtime,
        owner,
        leadership,
        connectivity,
        wake: hints.source,
        concurrency: settings.concurrency,
        intervalMs: settings.drainIntervalMs,
        sendable: users.sendable,
        kick: () => tabs.kick(),
        nextChange: (key, signal) => tabs.nextChange(key, signal),
        resume: (resumeOptions) => core.resume(resumeOptions),
        onInterval: async () => {
          await storage.check();
          await core.sweep().catch(background('sweep'));
        },
        events: emitter,
        closed: closing,
      }),
    runtime,
  );
  loop().catch(() => undefined);

  const core = createPlatformClient(
    {
      ...settings.core,
      store,
      runtime,
      owner,
      fetch: watchedFetch(settings.core.fetch, () => connectivity.reportUnreachable('transport_error')),
      connectivity,
      dispatch: async (key, run, signal) => (await loop()).dispatch(key, run, signal),
      // Asked before every attempt, not only when the drainer picks an operation up: a user switch
      // during a retry delay must stop the next attempt too.
      mayAttempt: users.sendable,
      // The drainer's slots are the limit; resume() hands every due operation to it at once.
      concurrency: Number.MAX_SAFE_INTEGER,
    },
    { memoryStore: loadMemoryStore },
  );

  function status(): ClientStatus {
    return {
      leader: leadership.isLeader(),
      mode: leadership.mode,
      online: connectivity.online(),
      storage: storage.status,
    };
  }

  // Work the network did not take: the service worker is asked to send it once the network is back, tab or no tab.
  const wakeWorker = settings.backgroundSync
    ? backgroundSync(env.navigator, syncTag(database), background('background sync'))
    : undefined;

  // Every local event: tell the other tabs, refresh the live view, watch for an unreachable network.
  const unsubscribers = RELAYED_EVENTS.map((name) =>
    core.on(name, (payload: OncelyEvents[typeof name]) => tabs.relay(name, payload)),
  );
  unsubscribers.push(
    core.on('enqueued', () => {
      if (!connectivity.online()) wakeWorker?.request();
    }),
    core.on('attempt:ended', (event) => {
      if (event.class !== 'not_sent') return;
      connectivity.reportUnreachable('not_sent');
      wakeWorker?.request();
    }),
    connectivity.onChange((online, reason) => {
      emitter.emit('connectivity:changed', { online, reason });
      refresh();
    }),
    leadership.onChange((leader) => {
      emitter.emit('leader:changed', { leader, mode: leadership.mode });
      tabs.wakeAll();
      refresh();
    }),
    onVisible(env.document, () => {
      hints.fire();
      void storage.check();
      refresh();
    }),
  );

  /** Start-up has reached the drain loop; it starts once it is built (on a later call if that failed now). */
  let startDue = false;
  let started = false;
  async function drainLoop(): Promise<DrainLoop> {
    const loaded = await loop();
    if (startDue && !started) {
      started = true;
      loaded.start();
    }
    return loaded;
  }

  async function start(): Promise<void> {
    await storage.check();
    if (options.persist === true) await storage.persist(env.navigator?.storage);
    startDue = true;
    await drainLoop();
  }

  const ready = start().catch(background('start-up'));

  function announceChange(): void {
    tabs.changed();
    refresh();
  }

  let closed: Promise<void> | undefined;
  const clearModule = lazy(() => import('./clear.js'), runtime);

  return {
    owner,
    ready,
    async send<T>(request: OncelyRequest<T>): Promise<SendResult<T>> {
      const stamped = users.stamped(request);
      await drainLoop();
      return core.send(stamped);
    },
    async enqueue<T>(request: OncelyRequest<T>): Promise<Enqueued<T>> {
      const stamped = users.stamped(request);
      await drainLoop();
      return core.enqueue(stamped);
    },

    async resume(resumeOptions) {
      const loaded = await drainLoop();
      if (leadership.isLeader()) return loaded.drain(true, resumeOptions);
      tabs.kick();
      return core.resume(resumeOptions);
    },

    get: (key) => core.get(key),
    list: (filter) => core.list(filter),
    quarantined: () => core.quarantined(),
    async retry(key) {
      await drainLoop();
      return core.retry(key);
    },

    async discard(key) {
      await core.discard(key);
      announceChange();
    },

    sweep: () => core.sweep(),
    reconcile: (key) => core.reconcile(key).finally(announceChange),
    settle: (key, outcome) => core.settle(key, outcome).finally(announceChange),
    policyFor: (method, url) => core.policyFor(method, url),
    on: (event, fn) => listen(emitter, core, event, fn),
    subscribe: views.subscribe,

    async clear(clearOptions?: ClearOptions): Promise<ClearResult> {
      const target = clearOptions?.userId ?? users.current();
      if (options.user !== undefined && target === undefined) {
        throw new InvalidOptionsError('userId', 'no current user: pass clear({ userId }) to say whose operations');
      }
      // Loaded when first used: nothing else here needs it at start-up.
      const { clearOperations } = await clearModule();
      const result = await clearOperations(
        {
          store,
          now: runtime.now,
          target,
          settleKit: { revise, endLast },
          mayHaveTakenEffect,
          isTerminal,
        },
        clearOptions,
      );
      announceChange();
      return result;
    },

    status,

    close() {
      closed ??= (async () => {
        closing.stop();
        for (const off of unsubscribers) off();
        // Loops stop (in-flight attempts finish and are recorded), leases are released...
        await core.close();
        // The core closes only stores it made; this one we made.
        if (givenStore === undefined) await store.close?.();
        connectivity.dispose();
        // ...and only then may another tab become the drainer.
        await leadership.release();
        tabs.close();
      })();
      return closed;
    },
  };
}
