/**
 * The browser client's options, and their validation: an invalid option
 * fails at construction naming the field, before anything is opened.
 */
import type { ClientOptions } from '../client.js';
import { CLIENT_OPTION_KEYS } from '../client-api.js';
import { InvalidOptionsError } from '../errors.js';
import { checkClientOptionKeys } from '../options.js';
import { bool, fn, num, shape, when } from '../policy/check.js';
import type { OperationStore } from '../store/store.js';
import type { BrowserEnv } from './env.js';
import type { WipeReport } from './persistence.js';

export interface BrowserClientOptions
  extends Omit<ClientOptions, 'store' | 'connectivity' | 'dispatch' | 'mayAttempt'> {
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
  /**
   * Ask the browser to wake the app's service worker (`oncely/service-worker`)
   * when the network is back: a Background Sync tag (`oncely:<database>`) is
   * registered when an operation is queued while offline or an attempt could
   * not leave. Chromium only; elsewhere pages drain on load, `online` and
   * visibility as always. Needs a service worker that calls
   * `createServiceWorkerDrainer` with the same `database`.
   * @default false
   * @example { backgroundSync: true }
   */
  backgroundSync?: boolean;
  /** Browser globals to use instead of the real ones (tests). */
  env?: BrowserEnv;
}

/** The browser client's timings and limits, validated, with their defaults; and what is left for the core client. */
export interface BrowserSettings {
  concurrency: number;
  drainIntervalMs: number;
  settlePollMs: number;
  recheckMs: number;
  database: string;
  backgroundSync: boolean;
  /** The options the core client takes as they are. */
  core: Omit<BrowserClientOptions, BrowserOnlyOption>;
}

type BrowserOnlyOption =
  | 'store'
  | 'database'
  | 'user'
  | 'persist'
  | 'onStoreWiped'
  | 'concurrency'
  | 'drainIntervalMs'
  | 'settlePollMs'
  | 'recheckMs'
  | 'locks'
  | 'backgroundSync'
  | 'env';

/** A positive finite number (an interval or a count). */
const positive = when((v) => typeof v === 'number' && Number.isFinite(v) && v > 0, 'must be a positive number');

/** The browser's own option values (the core checks the options it is passed). */
const browserChecks = shape({
  concurrency: num({ int: true, min: 1 }),
  drainIntervalMs: positive,
  settlePollMs: positive,
  recheckMs: positive,
  user: fn,
  backgroundSync: bool,
});

/** The core options the browser client passes on (it brings its own connectivity, dispatch and mayAttempt). */
const { connectivity: _connectivity, dispatch: _dispatch, mayAttempt: _mayAttempt, ...CORE_KEYS } = CLIENT_OPTION_KEYS;

/** Every option `createBrowserClient` accepts (a key missing here fails to compile when an option is added). */
const BROWSER_OPTION_KEYS: Record<keyof BrowserClientOptions, true> = {
  ...CORE_KEYS,
  database: true,
  user: true,
  persist: true,
  onStoreWiped: true,
  drainIntervalMs: true,
  settlePollMs: true,
  recheckMs: true,
  locks: true,
  backgroundSync: true,
  env: true,
};

/**
 * Throws `InvalidOptionsError` naming the first invalid browser option (the
 * core validates its own); an unknown key is refused with the name meant.
 */
export function browserSettings(options: BrowserClientOptions): BrowserSettings {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  checkClientOptionKeys(options, Object.keys(BROWSER_OPTION_KEYS));
  browserChecks(options, '');
  const {
    store: _store,
    database,
    user: _user,
    persist: _persist,
    onStoreWiped: _onStoreWiped,
    concurrency = 4,
    drainIntervalMs = 5_000,
    settlePollMs = 1_000,
    recheckMs = 10_000,
    locks: _locks,
    backgroundSync,
    env: _env,
    ...core
  } = options;
  return {
    concurrency,
    drainIntervalMs,
    settlePollMs,
    recheckMs,
    database: database ?? 'oncely',
    backgroundSync: backgroundSync === true,
    core,
  };
}
