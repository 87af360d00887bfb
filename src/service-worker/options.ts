/**
 * The service worker drainer's options, and their validation: everything is
 * checked when the worker script runs `createServiceWorkerDrainer` (its
 * first evaluation), naming the field, not at the first `sync` event hours
 * later, when nobody is looking.
 */
import type { ClientOptions } from '../client.js';
import { CLIENT_OPTION_KEYS, validateClientOptions } from '../client-api.js';
import { InvalidOptionsError } from '../errors.js';
import { checkClientOptionKeys, EndpointTable, validatePolicy } from '../options.js';
import type { ServiceWorkerScopeLike } from './scope.js';
import type { DrainReport } from './session.js';

export interface ServiceWorkerDrainerOptions
  extends Omit<ClientOptions, 'store' | 'connectivity' | 'dispatch' | 'mayAttempt' | 'concurrency'> {
  /**
   * The IndexedDB database the app's pages queue into (their
   * `createBrowserClient({ database })`): the worker drains the same queue,
   * under the same drainer lock, and talks on the same channel.
   * @default 'oncely'
   */
  database?: string;
  /**
   * The signed-in user, as the pages' `user` option: only their operations
   * are sent. A worker has no page state, so it may read it from IndexedDB
   * (asked once per wake-up). Leave it out when the pages have no `user`.
   * @default every operation is sent
   * @example { user: async () => (await get('session'))?.userId }
   */
  user?: () => string | undefined | Promise<string | undefined>;
  /** Operations the worker sends at once, across scopes. @default 4 */
  concurrency?: number;
  /**
   * How long one wake-up may keep starting attempts. When it runs out the
   * worker stops (an attempt on the wire finishes, within its
   * `attemptTimeoutMs`), gives every lease back and releases the drainer
   * lock, so the browser's own limit (Chromium ends a `sync` event after
   * 3 minutes) never kills it holding work; what is left is taken up by
   * the next wake-up or an open page, with the same keys.
   * @default 60_000
   * @example { budgetMs: 20_000 }
   */
  budgetMs?: number;
  /**
   * Also drain on `periodicsync` events with the tag `oncely:<database>`
   * (the app registers it: `registration.periodicSync.register(tag, { minInterval })`;
   * Chromium only, for installed apps).
   * @default false
   */
  periodicSync?: boolean;
  /** Told what each wake-up did (for logs, or to tell pages with `clients.matchAll()`). */
  onDrain?: (report: DrainReport) => void;
  /** The worker's global scope (tests pass a fake). @default self */
  scope?: ServiceWorkerScopeLike;
}

export interface DrainerSettings {
  database: string;
  concurrency: number;
  budgetMs: number;
  periodicSync: boolean;
  /** What each wake-up's core client is made from. */
  core: Omit<ServiceWorkerDrainerOptions, WorkerOnlyOption>;
}

type WorkerOnlyOption = 'database' | 'user' | 'concurrency' | 'budgetMs' | 'periodicSync' | 'onDrain' | 'scope';

const { connectivity: _c, dispatch: _d, mayAttempt: _m, store: _s, concurrency: _n, ...CORE_KEYS } = CLIENT_OPTION_KEYS;

/** Every option `createServiceWorkerDrainer` accepts (a key missing here fails to compile). */
const WORKER_OPTION_KEYS: Record<keyof ServiceWorkerDrainerOptions, true> = {
  ...CORE_KEYS,
  database: true,
  user: true,
  concurrency: true,
  budgetMs: true,
  periodicSync: true,
  onDrain: true,
  scope: true,
};

function positive(value: unknown, name: string, fallback: number, integer = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new InvalidOptionsError(name, integer ? 'must be a positive integer' : 'must be a positive number');
  }
  return value;
}

/** Throws `InvalidOptionsError` naming the first invalid option, the core's included. */
export function drainerSettings(options: ServiceWorkerDrainerOptions): DrainerSettings {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  checkClientOptionKeys(options, Object.keys(WORKER_OPTION_KEYS));
  const { database, user, concurrency, budgetMs, periodicSync, onDrain, scope, ...core } = options;
  validateClientOptions(core);
  // What createClient checks when it is built, checked now: the worker builds one per wake-up.
  new EndpointTable(validatePolicy(core.policy ?? {}, 'policy'), core.endpoints ?? {});
  if (database !== undefined && (typeof database !== 'string' || database === '')) {
    throw new InvalidOptionsError('database', 'must be a non-empty string');
  }
  for (const [name, value] of [
    ['user', user],
    ['onDrain', onDrain],
  ] as const) {
    if (value !== undefined && typeof value !== 'function') throw new InvalidOptionsError(name, 'must be a function');
  }
  if (periodicSync !== undefined && typeof periodicSync !== 'boolean') {
    throw new InvalidOptionsError('periodicSync', 'must be a boolean');
  }
  if (scope !== undefined && typeof scope?.addEventListener !== 'function') {
    throw new InvalidOptionsError('scope', 'must be the worker global scope (with addEventListener)');
  }
  return {
    database: database ?? 'oncely',
    concurrency: positive(concurrency, 'concurrency', 4, true),
    budgetMs: positive(budgetMs, 'budgetMs', 60_000),
    periodicSync: periodicSync === true,
    core,
  };
}
