/**
 * `createServiceWorkerDrainer`: the app's service worker drains the queue
 * its pages write (the same IndexedDB records, keys, leases, drainer lock
 * and classification as `createBrowserClient`), so an operation queued
 * offline goes out once the network is back, even with every tab closed.
 *
 * Wiring only: which worker event starts a wake-up (`sync` with the
 * database's tag, `periodicsync` if asked, a page's `oncely:drain`
 * message), the lock (lock.ts), and the wake-up itself (session.ts). A
 * wake-up while one runs joins it (and starts a pass for new work), so the
 * worker never runs two drains.
 *
 * Background Sync is a hint, never the only path: where it is missing
 * (Firefox, Safari) pages drain on load, `online` and visibility.
 */
import { openTabChannel } from '../browser/channel.js';
import { Hints } from '../browser/hints.js';
import { channelName, drainerLockName, syncTag } from '../browser/names.js';
import { type Runtime, systemRuntime } from '../runtime.js';
import { indexedDbStore } from '../store/indexeddb.js';
import { trackedStore } from '../store/tracked.js';
import { clientOpen, HELD_ELSEWHERE, withDrainLock } from './lock.js';
import { drainerSettings, type ServiceWorkerDrainerOptions } from './options.js';
import { isDrainMessage, type ServiceWorkerScopeLike, type SyncEventLike } from './scope.js';
import { type DrainReport, drainHeld, type SessionContext, type WakeReason } from './session.js';

/** How often a `sync` wake-up looks at `navigator.onLine` again while it still says offline. */
const ONLINE_POLL_MS = 100;
/** How often a sync asks again for a drainer lock taken while no page is open (a stopped worker's, not yet taken back). */
const LOCK_POLL_MS = 100;

/** The browser's own wake-ups, which it fires only when it sees the network. */
const isSyncReason = (reason: WakeReason): boolean => reason === 'sync' || reason === 'periodicsync';

export interface ServiceWorkerDrainer {
  /** One wake-up now, as the event handlers do (joins one under way). Resolves with what it did. */
  drain(reason?: WakeReason): Promise<DrainReport>;
  /** The `sync` / `periodicsync` tag this drainer answers: `oncely:<database>`. */
  readonly tag: string;
  /** The lease owner id of this worker's attempts (`service-worker:<uuid>`, new each time the worker starts). */
  readonly owner: string;
}

/**
 * Call it once, at the top level of the service worker script: the browser
 * only delivers events to listeners added during the script's first run.
 * Bundle the worker as one classic script (no code splitting: `import()` is
 * not allowed in a service worker).
 *
 * @example
 * // sw.ts (bundled to /sw.js), pages use createBrowserClient({ database: 'shop', backgroundSync: true, … })
 * import { createServiceWorkerDrainer } from 'oncely/service-worker';
 * createServiceWorkerDrainer({
 *   database: 'shop',
 *   baseUrl: 'https://api.example.com',
 *   endpoints: { 'POST /payments': { profile: 'stripe' } },
 *   headers: async () => ({ authorization: `Bearer ${await tokenFromIndexedDb()}` }),
 * });
 */
export function createServiceWorkerDrainer(options: ServiceWorkerDrainerOptions): ServiceWorkerDrainer {
  const settings = drainerSettings(options);
  const scope = options.scope ?? (globalThis as unknown as ServiceWorkerScopeLike);
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const owner = options.owner ?? `service-worker:${runtime.uuid()}`;
  const { database } = settings;
  const tag = syncTag(database);
  const hints = new Hints();
  const onError = (error: unknown, during: string): void => {
    // A worker has no page to show it; the console of the worker (DevTools) does.
    console.error(`oncely service worker: ${during} failed`, error);
  };
  const context: SessionContext = {
    settings,
    store: trackedStore(indexedDbStore({ name: database, now: runtime.now }), runtime),
    runtime,
    owner,
    navigator: scope.navigator,
    BroadcastChannel: scope.BroadcastChannel,
    hints,
    user: options.user,
    onError,
  };

  let running: Promise<DrainReport> | undefined;

  /** Whether `navigator.onLine` stops saying offline within `budgetMs`, looked at every `ONLINE_POLL_MS`. */
  async function onlineWithin(budgetMs: number): Promise<boolean> {
    const endAt = runtime.now() + budgetMs;
    while (scope.navigator?.onLine === false) {
      if (runtime.now() >= endAt) return false;
      await runtime.sleep(ONLINE_POLL_MS);
    }
    return true;
  }

  async function wakeUp(reason: WakeReason): Promise<DrainReport> {
    const startedAt = runtime.now();
    const idle = (outcome: 'busy' | 'offline'): DrainReport => ({
      reason,
      outcome,
      succeeded: 0,
      failed: 0,
      blocked: 0,
      unknown: 0,
      left: 0,
      unauthorized: 0,
      budgetSpent: false,
      startedAt,
      endedAt: runtime.now(),
    });
    if (scope.navigator?.onLine === false) {
      // Chromium fires `sync` when it sees the network back, and the worker's `navigator.onLine` can still say
      // offline for a moment: ending the event now would count the sync as done and leave the queue until a
      // page opens. A sync waits for it instead, within its budget (a worker hears no `online` event).
      if (!isSyncReason(reason) || !(await onlineWithin(settings.budgetMs))) return idle('offline');
    }
    const locks = scope.navigator?.locks;
    const lockName = drainerLockName(database);
    const take = () => withDrainLock(locks, lockName, (mode) => drainHeld(context, reason, mode));
    let held = await take();
    if (held === HELD_ELSEWHERE && isSyncReason(reason)) {
      // The browser takes a stopped worker's lock back a few hundred ms after the stop. A sync landing in
      // between, with no page open to hold the lock, would end with nobody draining and the queue left until
      // a page opens: it waits for the lock instead, within its budget.
      const endAt = startedAt + settings.budgetMs;
      while (held === HELD_ELSEWHERE && !(await clientOpen(scope.clients))) {
        if (runtime.now() >= endAt) return { ...idle('busy'), budgetSpent: true };
        await runtime.sleep(LOCK_POLL_MS);
        held = await take();
      }
    }
    if (held !== HELD_ELSEWHERE) return held;
    // A page is the drainer: make sure it looks now.
    const channel = openTabChannel(scope.BroadcastChannel, channelName(database), owner, () => undefined);
    channel.post({ type: 'kick', from: owner });
    channel.close();
    return idle('busy');
  }

  function drain(reason: WakeReason = 'call'): Promise<DrainReport> {
    if (running !== undefined) {
      hints.fire();
      return running;
    }
    const current = wakeUp(reason).then((report) => {
      options.onDrain?.(report);
      return report;
    });
    running = current;
    const clear = (): void => {
      if (running === current) running = undefined;
    };
    current.then(clear, clear);
    return current;
  }

  /** For `sync`: work left that a later try could send fails the event, so Chromium fires it again later. */
  async function forSync(event: SyncEventLike, reason: WakeReason): Promise<void> {
    const report = await drain(reason);
    const retryable = report.left - report.unauthorized;
    if (reason !== 'sync' || event.lastChance === true) return;
    if (report.outcome === 'offline') {
      throw new Error(`oncely: still offline after ${settings.budgetMs} ms; asking for another sync of ${database}`);
    }
    if (report.outcome === 'busy' && report.budgetSpent) {
      throw new Error(
        `oncely: the drainer lock of ${database} was held with no page open for ${settings.budgetMs} ms; asking for another sync`,
      );
    }
    if (report.outcome === 'drained' && retryable > 0) {
      throw new Error(`oncely: ${retryable} operation(s) of ${database} still queued; asking for another sync`);
    }
  }

  scope.addEventListener('sync', (event) => {
    if (event.tag === tag) event.waitUntil(forSync(event, 'sync'));
  });
  if (settings.periodicSync) {
    scope.addEventListener('periodicsync', (event) => {
      if (event.tag === tag) event.waitUntil(forSync(event, 'periodicsync'));
    });
  }
  scope.addEventListener('message', (event) => {
    if (isDrainMessage(event.data, database)) event.waitUntil(drain('message'));
  });

  return { drain, tag, owner };
}
