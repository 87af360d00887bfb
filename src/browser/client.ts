/**
 * The browser client: an offline queue that sends each operation once,
 * across reloads and tabs. A composition over the core client:
 *
 *   core client (write-ahead, loop, scopes, 401 refresh)
 *     + IndexedDB store (default)
 *     + connectivity (connectivity.ts): no attempt while offline or unreachable
 *     + drainer election (leader.ts) and dispatch (drainer.ts): one tab sends
 *     + tab channel (channel.ts): kicks, settlements, changes between tabs
 *     + persistence (persistence.ts): persist(), wipe detection
 *     + live view (subscribe.ts): snapshots for UIs
 *
 * Who sends: in "locks" mode only the tab holding the drainer lock. Every
 * other tab writes its operations ahead and waits; its `send()` and
 * `enqueue().settled` resolve when the drainer has settled the operation
 * (announced over the channel, or found by polling the store). This keeps
 * "one sender" a property of one lock, not of timing: a follower never
 * runs the loop, so it can never race the drainer.
 */
import {
  type ClientOptions,
  createClient,
  type Enqueued,
  type OncelyClient,
  type ResumeOptions,
  type SendResult,
} from '../client.js';
import { InvalidOptionsError } from '../errors.js';
import type { OncelyEventName, OncelyEvents } from '../events.js';
import { isNotSentCode } from '../flow/classify.js';
import { mayHaveTakenEffect, stopWith } from '../flow/decide.js';
import type { OncelyRequest } from '../flow/operation.js';
import { emptySummary, type ResumeSummary } from '../flow/resume.js';
import { Shutdown } from '../flow/shutdown.js';
import { abandon } from '../flow/transitions.js';
import { isTerminal, type OperationRecord } from '../model.js';
import { type Runtime, systemRuntime } from '../runtime.js';
import { indexedDbStore } from '../store/indexeddb.js';
import type { OperationStore } from '../store/store.js';
import { trackedStore } from '../store/tracked.js';
import { openTabChannel, type TabMessage } from './channel.js';
import { browserConnectivity } from './connectivity.js';
import { createDispatcher, fenceForeignLease, Slots } from './drainer.js';
import { type BrowserEnv, globalEnv } from './env.js';
import {
  BROWSER_ONLY_EVENTS,
  BrowserEmitter,
  type BrowserEventName,
  type BrowserListener,
  type BrowserOnlyEvents,
} from './events.js';
import { electLeader } from './leader.js';
import { checkForWipe, requestPersistence, type WipeReport } from './persistence.js';
import { type ClientStatus, LiveView, type SubscribeOptions, type Subscriber } from './subscribe.js';

export interface BrowserClientOptions extends Omit<ClientOptions, 'store' | 'connectivity' | 'dispatch'> {
  /**
   * Where operations are written ahead. Every tab of the app must use the
   * browser client on the same store (a plain core client on it would not
   * take part in the drainer election). Wipe detection covers the default
   * store only.
   * @default indexedDbStore({ name: database })
   */
  store?: OperationStore;
  /**
   * The IndexedDB database (and the name of the drainer lock and tab
   * channel). Give each app its own.
   * @default 'oncely'
   */
  database?: string;
  /**
   * The signed-in user. New operations are stamped with `meta.userId`; only
   * the current user's operations are sent (so one user's queue is never
   * sent with another's credentials); `clear()` removes theirs.
   * @example { user: () => session.userId }
   */
  user?: () => string | undefined;
  /**
   * Ask the browser to keep this origin's storage under pressure
   * (`navigator.storage.persist()`), once at start. The answer is in
   * `status().storage.persisted` and the `storage:persisted` event.
   * @default false
   */
  persist?: boolean;
  /** Called when the database is found wiped (also the `store:wiped` event). */
  onStoreWiped?: (report: WipeReport) => void;
  /** Operations the drainer sends at once, across scopes. @default 4 */
  concurrency?: number;
  /**
   * How often the drainer looks for due work besides its triggers (start-up,
   * `online`, the page becoming visible, new work from another tab).
   * @default 5_000
   */
  drainIntervalMs?: number;
  /** How often a tab waiting on the drainer re-reads an operation besides announcements. @default 1_000 */
  settlePollMs?: number;
  /** After an attempt could not reach the network, try again this much later even without an `online` event. @default 10_000 */
  recheckMs?: number;
  /**
   * Elect one drainer among tabs with the Web Locks API when available.
   * `false`: every tab drains, and per-record leases alone keep one sender per operation.
   * @default true
   */
  locks?: boolean;
  /** Browser globals to use instead of the real ones (tests). */
  env?: BrowserEnv;
}

export interface ClearOptions {
  /** Whose operations. @default the current `user()`; every operation when no `user` is configured */
  userId?: string;
  /** Also remove their finished operations (kept for replay and diagnostics otherwise). @default false */
  finished?: boolean;
}

export interface ClearResult {
  /** Keys removed. */
  removed: string[];
  /** Of those, operations an earlier attempt may already have carried out (reconcile them if it matters). */
  mayHaveTakenEffect: string[];
  /** Keys left because an attempt is on the wire right now; they settle normally. */
  inFlight: string[];
}

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

/** Kicks that arrive within this window are served by one drain pass. */
const KICK_COALESCE_MS = 10;

function positive(options: BrowserClientOptions, name: keyof BrowserClientOptions, fallback: number): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionsError(name, 'must be a positive number');
  }
  return value;
}

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
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  const concurrency = positive(options, 'concurrency', 4);
  if (!Number.isInteger(concurrency)) throw new InvalidOptionsError('concurrency', 'must be an integer');
  const drainIntervalMs = positive(options, 'drainIntervalMs', 5_000);
  const settlePollMs = positive(options, 'settlePollMs', 1_000);
  const recheckMs = positive(options, 'recheckMs', 10_000);
  if (options.user !== undefined && typeof options.user !== 'function') {
    throw new InvalidOptionsError('user', 'must be a function');
  }
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
  /** For the runtime's sleeps of this client's own timers. */
  const timers = new AbortController();
  const emitter = new BrowserEmitter();
  const currentUser = (): string | undefined => user?.();
  const sendable = (record: OperationRecord): boolean => user === undefined || record.meta?.userId === currentUser();
  const background = (during: string) => (error: unknown) => emitter.emit('background:error', { error, during });

  let persisted: boolean | undefined;
  let wiped: WipeReport | undefined;

  const leadership = electLeader({
    name: `oncely:drainer:${database}`,
    locks: locks === false ? undefined : env.navigator?.locks,
    onError: background('drainer election (falling back to leases)'),
  });
  const connectivity = browserConnectivity({ env, runtime, recheckMs });
  const wakeups = new Wakeups(runtime, settlePollMs, closing);
  const channel = openTabChannel(env.BroadcastChannel, `oncely:${database}`, owner, onMessage);
  const slots = new Slots(concurrency);

  const dispatcher = createDispatcher({
    store,
    owner,
    leadership,
    slots,
    sendable,
    kick: () => channel.post({ type: 'kick', from: owner }),
    nextChange: (key, signal) => wakeups.next(key, signal),
    closed: closing,
  });

  // A transport failure without any answer (no timeout, no abort) says the network is gone.
  const baseFetch = coreOptions.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const watchedFetch: typeof globalThis.fetch = async (input, init) => {
    try {
      return await baseFetch(input, init);
    } catch (error) {
      const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
      // Provably unsent failures are reported as `not_sent` once the attempt is classified.
      if (signal?.aborted !== true && !isNotSentCode(errorCode(error))) {
        connectivity.reportUnreachable('transport_error');
      }
      throw error;
    }
  };

  const core = createClient({
    ...coreOptions,
    store,
    runtime,
    owner,
    fetch: watchedFetch,
    connectivity,
    dispatch: dispatcher.dispatch,
    // The drainer's slots are the limit; resume() hands every due operation to it at once.
    concurrency: Number.MAX_SAFE_INTEGER,
  });

  const live = new LiveView({
    load: () => store.list(),
    status,
    currentUser,
    onError: background('live view'),
  });

  function status(): ClientStatus {
    return {
      leader: leadership.isLeader(),
      mode: leadership.mode,
      online: connectivity.online(),
      storage: { persisted, wiped },
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
      if (online) schedulePass();
      void live.refresh();
    }),
    leadership.onChange((leader) => {
      emitter.emit('leader:changed', { leader, mode: leadership.mode });
      wakeups.wakeAll();
      if (leader) schedulePass();
      void live.refresh();
    }),
  );
  const onVisible = (): void => {
    if (env.document?.visibilityState !== 'visible') return;
    schedulePass();
    void checkWipe();
    void live.refresh();
  };
  env.document?.addEventListener('visibilitychange', onVisible);

  function onMessage(message: TabMessage): void {
    switch (message.type) {
      case 'kick':
        schedulePass();
        break;
      case 'changed':
        wakeups.wakeAll();
        schedulePass();
        void live.refresh();
        break;
      case 'wiped':
        reportWipe(message.report, false);
        break;
      case 'event':
        if (message.name === 'settled') wakeups.wake(message.payload.key);
        void live.refresh();
        break;
    }
  }

  let passScheduled = false;
  /** Soon, one drain pass (kicks in a burst share it). Only the drainer drains. */
  function schedulePass(): void {
    if (passScheduled || closing.stopped || !leadership.isLeader()) return;
    passScheduled = true;
    runtime.sleep(KICK_COALESCE_MS, timers.signal).then(
      () => {
        passScheduled = false;
        drain().catch(background('drain'));
      },
      () => undefined,
    );
  }

  /**
   * Fences stale leases (locks mode), then hands every due operation to the
   * dispatcher. Skips `resume()` when everything is already being driven
   * (a pass every few seconds while offline must not pile up waiters).
   */
  async function drain(always = false, resumeOptions: ResumeOptions = {}): Promise<ResumeSummary> {
    if (closing.stopped || !leadership.isLeader()) return emptySummary();
    const now = runtime.now();
    let due = 0;
    for (const record of await store.list({ state: ['pending', 'in_flight'] })) {
      if (dispatcher.busy.has(record.key) || !sendable(record)) continue;
      if (record.lease !== undefined && record.lease.owner !== owner) {
        if (leadership.mode === 'locks') await fenceForeignLease(store, record.key, owner);
        else if (record.lease.until > now) continue;
      }
      due++;
    }
    emitter.emit('drain:pass', { due });
    if (due === 0 && !always) return emptySummary();
    return core.resume(resumeOptions);
  }

  function reportWipe(report: WipeReport, announce: boolean): void {
    if (wiped?.markerId === report.markerId) return;
    wiped = report;
    emitter.emit('store:wiped', report);
    try {
      onStoreWiped?.(report);
    } catch (error) {
      background('onStoreWiped')(error);
    }
    if (announce) channel.post({ type: 'wiped', from: owner, report });
    void live.refresh();
  }

  async function checkWipe(): Promise<void> {
    try {
      const check = await checkForWipe({
        database,
        indexedDB: givenStore === undefined ? env.indexedDB : undefined,
        localStorage: env.localStorage,
        now: runtime.now,
        uuid: runtime.uuid,
      });
      if (check.status === 'wiped') reportWipe(check.report, true);
    } catch (error) {
      background('wipe check')(error);
    }
  }

  async function start(): Promise<void> {
    await checkWipe();
    if (persist === true) {
      try {
        const answer = await requestPersistence(env.navigator?.storage);
        if (answer !== undefined) {
          persisted = answer;
          emitter.emit('storage:persisted', { persisted: answer });
        }
      } catch (error) {
        background('storage.persist()')(error);
      }
    }
    if (leadership.isLeader()) drain().catch(background('drain'));
    // The periodic pass: catches work nobody announced (a missed message, an expired lease).
    void (async () => {
      while (!closing.stopped) {
        try {
          await runtime.sleep(drainIntervalMs, timers.signal);
        } catch {
          return;
        }
        if (!leadership.isLeader()) continue;
        schedulePass();
        await checkWipe();
        await core.sweep().catch(background('sweep'));
      }
    })();
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

  const client: BrowserClient = {
    owner,
    ready,

    send<T>(request: OncelyRequest<T>): Promise<SendResult<T>> {
      return core.send(stamped(request));
    },

    enqueue<T>(request: OncelyRequest<T>): Promise<Enqueued<T>> {
      return core.enqueue(stamped(request));
    },

    async resume(resumeOptions) {
      if (leadership.isLeader()) return drain(true, resumeOptions);
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

    async clear(clearOptions: ClearOptions = {}) {
      const target = clearOptions.userId ?? currentUser();
      if (user !== undefined && target === undefined) {
        throw new InvalidOptionsError('userId', 'no current user: pass clear({ userId }) to say whose operations');
      }
      const mine = (record: OperationRecord): boolean => target === undefined || record.meta?.userId === target;
      const result: ClearResult = { removed: [], mayHaveTakenEffect: [], inFlight: [] };
      for (const record of await store.list()) {
        if (!mine(record)) continue;
        if (isTerminal(record.state)) {
          if (clearOptions.finished !== true) continue;
          await store.delete(record.key);
        } else {
          // Settle it first, atomically and fenced, so no loop can start an attempt on it, then remove it.
          const now = runtime.now();
          const settled = await store.update(record.key, (current) => {
            if (current === undefined) return current;
            return abandon(current, stopWith(current, 'aborted', 'Removed by clear()'), now);
          });
          if (settled === undefined) continue;
          if (!isTerminal(settled.state)) {
            result.inFlight.push(record.key);
            continue;
          }
          await store.delete(record.key);
        }
        result.removed.push(record.key);
        if (mayHaveTakenEffect(record)) result.mayHaveTakenEffect.push(record.key);
      }
      announceChange();
      return result;
    },

    status,

    close() {
      closed ??= (async () => {
        closing.stop();
        timers.abort();
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
  return client;
}

/** The first `code` along an error's `cause` chain (fetch wraps the socket error). */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Wake-ups for tabs waiting on another tab's loop: by key (a settlement
 * was announced), all at once (leadership or the store changed), by a poll
 * timer, or when the client closes.
 */
class Wakeups {
  readonly #byKey = new Map<string, Set<() => void>>();
  readonly #runtime: Runtime;
  readonly #pollMs: number;
  readonly #closed: Shutdown;

  constructor(runtime: Runtime, pollMs: number, closed: Shutdown) {
    this.#runtime = runtime;
    this.#pollMs = pollMs;
    this.#closed = closed;
  }

  next(key: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = new AbortController();
      let unsubscribe = (): void => undefined;
      const done = (): void => {
        timer.abort();
        this.#byKey.get(key)?.delete(done);
        if (this.#byKey.get(key)?.size === 0) this.#byKey.delete(key);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      if (this.#closed.stopped || signal?.aborted) {
        resolve();
        return;
      }
      let set = this.#byKey.get(key);
      if (set === undefined) {
        set = new Set();
        this.#byKey.set(key, set);
      }
      set.add(done);
      unsubscribe = this.#closed.onStop(done);
      signal?.addEventListener('abort', done, { once: true });
      this.#runtime.sleep(this.#pollMs, timer.signal).then(done, () => undefined);
    });
  }

  wake(key: string): void {
    for (const fn of [...(this.#byKey.get(key) ?? [])]) fn();
  }

  wakeAll(): void {
    for (const set of [...this.#byKey.values()]) for (const fn of [...set]) fn();
  }
}
