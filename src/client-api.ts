/**
 * The public face of a client: its options (each documented, with its
 * default), the client interface, and what its calls resolve with. Options
 * are checked here, before anything is built: a bad value fails at once,
 * naming the field.
 */
import { InvalidOptionsError } from './errors.js';
import type { Listener, OncelyEventName } from './events.js';
import type { SettleOutcome } from './flow/calls/reconcile.js';
import type { ResumeSummary } from './flow/calls/resume.js';
import type { Outcome, SendResult } from './flow/calls/settle.js';
import type { AttemptContext, Connectivity } from './flow/drive/run.js';
import type { OncelyRequest } from './flow/request/operation.js';
import type { OperationRecord } from './model.js';
import { checkClientOptionKeys, type PolicyOptions, type ResolvedPolicy } from './options.js';
import { fn, list, num, shape, str, url } from './policy/check.js';
import { resultHeaderName } from './policy/request-policy.js';
import type { Runtime } from './runtime.js';
import type { OperationStore, QuarantineEntry, RecordFilter } from './store/store.js';

export type { SettleOutcome } from './flow/calls/reconcile.js';

/** What a send resolves with and what an outcome carries: defined with the code that makes them. */
export type { Outcome, OutcomeFailed, OutcomeSucceeded, SendResult } from './flow/calls/settle.js';

export interface ClientOptions {
  /**
   * Prefix for request URLs that are not absolute, joined as ky's
   * `prefixUrl` is (not URL-resolved): `'/payments'` and `'payments'` both
   * go to `https://api.example.com/v1/payments`, with exactly one `/` at
   * the join. Endpoint rules match the path relative to it
   * (`'POST /payments'`). Absolute URLs are used as they are.
   * @example { baseUrl: 'https://api.example.com/v1/' }
   */
  baseUrl?: string;
  /**
   * Where operations are written ahead. Use a durable store (`fileStore` from
   * `oncely/node`, `indexedDbStore` from `oncely/browser`) for anything that
   * must survive a restart.
   * @default memoryStore()
   */
  store?: OperationStore;
  /** Clock, sleep, randomness and uuid. Tests inject a fake one. @default the system's */
  runtime?: Partial<Runtime>;
  /**
   * The fetch ky uses. With Node's own (the default there), a redirect's
   * status and Location are hidden, as in a browser, which spares every
   * request a copy (see docs/guarantees.md, "Only the first hop"); a wrapper of
   * your own shows them.
   * @default globalThis.fetch
   * @example { fetch: (input, init) => fetch(input, init) }
   */
  fetch?: typeof globalThis.fetch;
  /**
   * Credentials for each attempt, called every time (so a refreshed token is
   * picked up) and never stored.
   * @example { headers: async () => ({ authorization: `Bearer ${await getToken()}` }) }
   */
  headers?: (ctx: AttemptContext) => Record<string, string> | Promise<Record<string, string>>;
  /**
   * Called once per operation on a 401; when it resolves, the same request
   * is resent at once with the same key (and fresh `headers`).
   */
  onUnauthorized?: (ctx: AttemptContext) => void | Promise<void>;
  /** More header names never to store (credentials are always refused). @default [] */
  deniedHeaders?: string[];
  /** Extra response header names to keep with stored results. @default [] */
  resultHeaders?: string[];
  /** The default retry policy. */
  policy?: PolicyOptions;
  /**
   * Per-endpoint policies by `'METHOD /path'` pattern (`*` one segment, `**`
   * any); the most specific match wins.
   * @example { endpoints: { 'POST /payments': { profile: 'stripe', deadlineMs: 600_000 }, 'GET /catalog/**': { deadlineMs: 5_000 } } }
   */
  endpoints?: Record<string, PolicyOptions>;
  /**
   * This client's lease owner id. A single-instance worker with a stable id
   * reclaims its own operations at once after a restart; otherwise another
   * owner waits for the lease (`leaseMs`) to expire. Never share one id
   * between processes that run at the same time.
   * @default a random uuid
   */
  owner?: string;
  /**
   * How long a claim on an operation lasts beyond its current attempt or
   * wait; another tab or process takes over after that if this one vanished.
   * @default 30_000
   */
  leaseMs?: number;
  /** Operations `resume()` drives at once. @default 8 */
  concurrency?: number;
  /**
   * How often, at most, the client removes finished operations past their
   * `retainUntil` by itself: on its first use, then on a `send`, `enqueue`
   * or `resume` once this long has passed since the last sweep (on the
   * runtime's clock). The sweep runs beside the request, never delaying it.
   * @default 600_000 (10 minutes)
   * @example { sweepIntervalMs: 60 * 60_000 }
   */
  sweepIntervalMs?: number;
  /**
   * What the platform knows about the network; while offline no attempt is
   * made or counted. The browser client passes one built on `navigator.onLine`.
   * @default none (always try)
   */
  connectivity?: Connectivity;
  /**
   * Who runs an operation's loop once it is its scope's turn. `run` is this
   * client's own loop for `key`; the hook may call it (at once, or later
   * under a limit) or wait for another owner to settle the operation, and
   * resolves with the record as stored. The browser client uses it so that
   * only the tab elected as drainer ever sends.
   * @default run at once
   */
  dispatch?: (
    key: string,
    run: (signal?: AbortSignal) => Promise<OperationRecord>,
    signal?: AbortSignal,
  ) => Promise<OperationRecord>;
  /**
   * Whether an operation may be attempted now, asked before every attempt
   * (after any wait: a retry delay, the network, the host's budget). When
   * it says no, the client sends nothing, gives up its lease and leaves the
   * operation pending; a caller waiting on it (`send`, `settled`) keeps
   * waiting, looking again every second, until it may go or the caller
   * aborts, and `resume()` leaves it as it is. The browser client passes one
   * built on its `user` option, so that an operation queued by one user is
   * never sent with another user's credentials.
   * @default every operation, always
   * @example { mayAttempt: (record) => record.meta?.tenant === currentTenant() }
   */
  mayAttempt?: (record: OperationRecord) => boolean;
}

export interface ResumeOptions {
  /**
   * Also wait for operations held by other owners, taking over those whose
   * owner vanished once their lease expires. Use it to drain a store after a
   * crash (a worker restarting with a new owner id, a CLI).
   * @default false
   */
  waitForLeases?: boolean;
  /**
   * Called once for each operation the pass took up, with its final outcome,
   * as soon as it settles (or stops: another owner took it, the client
   * closed). `resume()` keeps no list of outcomes, so a drain of 100,000
   * operations holds only the ones in flight; keep what you need here. A
   * returned promise is awaited before that slot takes the next operation.
   * If it throws (or rejects), the pass still drives every operation, then
   * `resume()` rejects with the first such error.
   * @default none (only the counts of the `ResumeSummary`)
   * @example await client.resume({ onOutcome: (o) => { if (!o.ok) console.error(o.key, o.state, o.error?.message); } })
   */
  onOutcome?: (outcome: Outcome) => void | Promise<void>;
}

export interface DiscardOptions {
  /**
   * Discard even an operation that may have taken effect (reconciled by
   * other means). Never overrides a live lease.
   * @default false
   */
  force?: boolean;
}

export interface Enqueued<T = unknown> {
  key: string;
  /** Settles when the operation does; never rejects. */
  settled: Promise<Outcome<T>>;
}

export interface OncelyClient {
  /**
   * Sends once: resolves with the result, or rejects with a typed error
   * carrying `state`, `key`, `attempts`, `reason` (an abort by the request's
   * `signal`: a `DOMException` named `AbortError` with those fields).
   */
  send<T = unknown>(request: OncelyRequest<T>): Promise<SendResult<T>>;
  /** Writes the operation ahead and returns once it is stored; `settled` follows. */
  enqueue<T = unknown>(request: OncelyRequest<T>): Promise<Enqueued<T>>;
  /**
   * Drives every stored operation that is not finished, in creation order,
   * `concurrency` at a time, and resolves when they settle. Operations another
   * live tab or process holds are left to it, unless `waitForLeases` is set:
   * then resume waits for that owner to finish, or for its lease to expire
   * (it crashed) and takes over with the same key. Resolves with counts by
   * final state; each outcome goes to `onOutcome` and is not kept.
   * @example const { driven, succeeded } = await client.resume({ waitForLeases: true });
   */
  resume(options?: ResumeOptions): Promise<ResumeSummary>;
  get(key: string): Promise<OperationRecord | undefined>;
  list(filter?: RecordFilter): Promise<OperationRecord[]>;
  /** Records the store moved aside because they failed validation. */
  quarantined(): Promise<QuarantineEntry[]>;
  /** Resends a `blocked` or `unknown` operation with the same key. */
  retry(key: string): Promise<Outcome>;
  /**
   * Forgets an operation. Refused while any owner holds a live lease on it
   * (in flight, or waiting between attempts), and refused for an operation
   * that may have taken effect unless `force` is set: forgetting it would
   * invite sending it again under a new key.
   */
  discard(key: string, options?: DiscardOptions): Promise<void>;
  /**
   * Removes finished operations past their `retainUntil` now. Returns how
   * many. The client also does it by itself (see `sweepIntervalMs`).
   */
  sweep(): Promise<number>;
  /**
   * Reconciles an `unknown` operation now: asks its rule's `reconcile` hook,
   * or, without one, resends it with the same key while the provider still
   * remembers the key (its stored answer settles it). Refused for an
   * operation in flight or already final. See docs/reconcile.md.
   * @example const outcome = await client.reconcile(key); if (outcome.state === 'unknown') showPending(key);
   */
  reconcile(key: string): Promise<Outcome>;
  /**
   * A webhook's verdict on an `unknown` operation: `{ applied: true, result? }`
   * settles it `succeeded` (`result` flagged `reconciled`), `{ applied: false }`
   * settles it `failed` (reason `not_applied`: safe to send as a new
   * operation). Recorded in `record.reconciliation.history`; refused for an
   * operation in flight or already final.
   * @example await client.settle(key, { applied: true, result: { data: event.data.object } })
   */
  settle(key: string, outcome: SettleOutcome): Promise<Outcome>;
  on<E extends OncelyEventName>(event: E, fn: Listener<E>): () => void;
  /**
   * The policy a request would get: which endpoint rule matched (its pattern
   * is the policy's `name`, or `default`) and every resolved setting.
   * @example client.policyFor('POST', '/payments').profile.name // 'stripe'
   */
  policyFor(method: string, url: string | URL): ResolvedPolicy;
  /** Stops driving operations; unfinished ones stay stored and resumable. */
  close(): Promise<void>;
}

/** The client's own option values (policy options are checked by `validatePolicy`). */
const clientOptionChecks = shape({
  baseUrl: url,
  leaseMs: num({ min: 1 }),
  concurrency: num({ int: true, min: 1 }),
  sweepIntervalMs: num({ min: 1, max: 2 ** 31 - 1 }),
  owner: str({ nonEmpty: true }),
  deniedHeaders: list(str()),
  resultHeaders: list(resultHeaderName),
  headers: fn,
  onUnauthorized: fn,
  fetch: fn,
  dispatch: fn,
  mayAttempt: fn,
  store: shape({ get: fn, put: fn, update: fn, delete: fn, list: fn }, true),
});

/** Every option `createClient` accepts: a key missing here fails to compile when an option is added. */
export const CLIENT_OPTION_KEYS: Readonly<Record<keyof ClientOptions, true>> = {
  baseUrl: true,
  store: true,
  runtime: true,
  fetch: true,
  headers: true,
  onUnauthorized: true,
  deniedHeaders: true,
  resultHeaders: true,
  policy: true,
  endpoints: true,
  owner: true,
  leaseMs: true,
  concurrency: true,
  connectivity: true,
  dispatch: true,
  mayAttempt: true,
  sweepIntervalMs: true,
};

export function validateClientOptions(options: ClientOptions): void {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  checkClientOptionKeys(options, Object.keys(CLIENT_OPTION_KEYS));
  clientOptionChecks(options, '');
  if (options.endpoints !== undefined && (typeof options.endpoints !== 'object' || options.endpoints === null)) {
    throw new InvalidOptionsError('endpoints', 'must be an object of pattern → policy');
  }
}
