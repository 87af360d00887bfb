/**
 * The composition root: options → ky instance (retry 0) → store + runtime →
 * engine. The public client is a thin shell over `flow/run.ts`: it writes
 * new operations ahead, joins concurrent sends of one key, and turns settled
 * records into results or typed errors.
 */
import ky from 'ky';
import {
  type ClientOptions,
  type Enqueued,
  type OncelyClient,
  type Outcome,
  type SendResult,
  validateClientOptions,
} from './client-api.js';
import {
  InvalidOptionsError,
  InvalidStateError,
  isOncelyError,
  KeyConflictError,
  NotFoundError,
  ResponseValidationError,
} from './errors.js';
import { Emitter } from './events.js';
import { directFetch } from './flow/attempt.js';
import { DriveList, type ToDrive } from './flow/drive-list.js';
import { LeaseWatch } from './flow/lease-watch.js';
import {
  ALWAYS_DENIED_HEADERS,
  newRecord,
  type OncelyRequest,
  prepareOperation,
  resolveUrl,
} from './flow/operation.js';
import { policyOfRecord, snapshotOf } from './flow/policy-snapshot.js';
import { bodyValue } from './flow/result.js';
import { countHeld, countOutcome, emptySummary, freeToDrive, orderForResume, pool, summaries } from './flow/resume.js';
import { type Engine, runOperation } from './flow/run.js';
import { discardRefusal, failureError, isHeldElsewhere, noop, suspendedError } from './flow/settle-errors.js';
import { Shutdown } from './flow/shutdown.js';
import { reopen } from './flow/transitions.js';
import { isTerminal, type OperationRecord, SEQ_PER_MS } from './model.js';
import { EndpointTable, validatePolicy } from './options.js';
import { Governor } from './policy/gate.js';
import { type Runtime, systemRuntime } from './runtime.js';
import { memoryStore } from './store/memory.js';
import { trackedStore } from './store/tracked.js';

export type {
  ClientOptions,
  DiscardOptions,
  Enqueued,
  OncelyClient,
  Outcome,
  ResumeOptions,
  SendResult,
} from './client-api.js';

export type { ResumeSummary } from './flow/resume.js';

/** Finished-record sweeps run at most this often from `resume()`. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Creates a client. Invalid options throw `InvalidOptionsError` naming the field.
 *
 * @example
 * const client = createClient({ baseUrl: 'https://api.example.com', endpoints: { 'POST /payments': { profile: 'stripe' } } });
 * const payment = await client.send({ url: '/payments', json: { amount: 4800, currency: 'EUR' } });
 */
export function createClient(options: ClientOptions = {}): OncelyClient {
  validateClientOptions(options);
  const defaults = validatePolicy(options.policy ?? {}, 'policy');
  const endpoints = new EndpointTable(defaults, options.endpoints ?? {});
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const store = trackedStore(options.store ?? memoryStore({ now: runtime.now }), runtime);
  const events = new Emitter();
  const shutdown = new Shutdown();
  const denied = new Set([...ALWAYS_DENIED_HEADERS, ...(options.deniedHeaders ?? []).map((h) => h.toLowerCase())]);
  const engine: Engine = {
    store,
    runtime,
    owner: { id: options.owner ?? runtime.uuid(), leaseMs: options.leaseMs ?? 30_000 },
    // ky's own retry and timeout are off (oncely has one loop and times attempts itself);
    // `directFetch` keeps the body off ky's Request → fetch(Request) path (see flow/attempt.ts).
    http: ky.create({
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      fetch: directFetch(() => options.fetch ?? globalThis.fetch),
    }),
    endpoints,
    governor: new Governor(),
    events,
    credentials: options.headers,
    onUnauthorized: options.onUnauthorized,
    resultHeaders: options.resultHeaders ?? [],
    shutdown,
    pollMs: 1_000,
    connectivity: options.connectivity,
    leases: new LeaseWatch(runtime),
  };
  store.onQuarantine((entry) => events.emit('quarantined', { id: entry.id, problems: entry.problems }));

  const running = new Map<string, Promise<OperationRecord>>();
  /** Admissions of one scope, chained: write-ahead order (and so send order) is call order. */
  const scopeAdmissions = new Map<string, Promise<unknown>>();
  let lastSeq = 0;
  /** A number that only grows: from the clock, so it keeps growing across restarts; +1 within a millisecond. */
  const nextSeq = (): number => {
    lastSeq = Math.max(runtime.now() * SEQ_PER_MS, lastSeq + 1);
    return lastSeq;
  };
  let lastSweepAt = Number.NEGATIVE_INFINITY;
  const scopeTails = new Map<string, Promise<OperationRecord>>();

  /**
   * One loop per key in this client; later callers join it. Scoped operations queue behind their scope.
   * `held` is given by a `resume()` pass that skips busy records: the scopes in which it left an
   * operation open (another owner holds it). The rest of such a scope must not start before that
   * operation ends, and this process would not otherwise know: its own queue only orders what it drives.
   */
  function drive(
    key: string,
    scope: string | undefined,
    signal?: AbortSignal,
    busy: 'wait' | 'skip' = 'wait',
    written?: OperationRecord,
    held?: Set<string>,
  ): Promise<OperationRecord> {
    const existing = running.get(key);
    if (existing !== undefined) return existing;
    const previous = scope === undefined ? undefined : scopeTails.get(scope);
    const run = (async () => {
      const before = previous === undefined ? undefined : await previous.catch(() => undefined);
      const holdsBack = (record: OperationRecord | undefined): boolean =>
        scope !== undefined && held !== undefined && record !== undefined && !isTerminal(record.state);
      if (scope !== undefined && held !== undefined && (held.has(scope) || holdsBack(before))) {
        held.add(scope);
        const current = await store.get(key);
        if (current === undefined) throw new NotFoundError(key);
        return current;
      }
      const dispatch = options.dispatch;
      const record =
        dispatch === undefined
          ? await runOperation(engine, key, signal, busy, written)
          : await dispatch(key, (s) => runOperation(engine, key, s, busy), signal);
      // Marked before this run settles, so a later drive of the scope sees it once the queue has moved on.
      if (holdsBack(record) && scope !== undefined) held?.add(scope);
      return record;
    })();
    running.set(key, run);
    if (scope !== undefined) scopeTails.set(scope, run);
    const cleanup = (): void => {
      if (running.get(key) === run) running.delete(key);
      if (scope !== undefined && scopeTails.get(scope) === run) scopeTails.delete(scope);
    };
    run.then(cleanup, cleanup);
    return run;
  }

  /**
   * Drives until terminal. Joining a `resume()` pass that skips busy records
   * can return early; then drive again, waiting for the other owner.
   */
  async function driveToEnd(
    key: string,
    scope: string | undefined,
    signal?: AbortSignal,
    written?: OperationRecord,
  ): Promise<OperationRecord> {
    let record = await drive(key, scope, signal, 'wait', written);
    while (!isTerminal(record.state) && !shutdown.stopped && signal?.aborted !== true) {
      record = await drive(key, scope, signal);
    }
    return record;
  }

  /** Validates, then writes the record ahead (or finds the existing one for this key). */
  function admit(request: OncelyRequest<unknown>): Promise<{ record: OperationRecord; fresh: boolean }> {
    if (shutdown.stopped) {
      // Refused before anything is written: nothing is queued that the caller would think gone.
      return Promise.reject(
        new InvalidStateError(undefined, undefined, 'The client is closed; create a new one to send'),
      );
    }
    const scope = typeof request === 'object' && request !== null ? request.scope : undefined;
    // Hashing may run off the main thread (WebCrypto): real work, reported as such.
    if (scope === undefined) return runtime.track(writeAhead(request));
    const previous = scopeAdmissions.get(scope);
    const admitted = (previous === undefined ? Promise.resolve() : previous.then(noop, noop)).then(() =>
      runtime.track(writeAhead(request)),
    );
    scopeAdmissions.set(scope, admitted);
    const forget = (): void => {
      if (scopeAdmissions.get(scope) === admitted) scopeAdmissions.delete(scope);
    };
    admitted.then(forget, forget);
    return admitted;
  }

  async function writeAhead(request: OncelyRequest<unknown>): Promise<{ record: OperationRecord; fresh: boolean }> {
    if (typeof request !== 'object' || request === null) throw new InvalidOptionsError('request', 'must be an object');
    const url = resolveUrl(request.url, options.baseUrl);
    const method = (request.method ?? 'POST').toUpperCase();
    const policy = endpoints.resolve(method, url);
    const prepared = await prepareOperation(request, url, policy, denied, runtime);
    let fresh = false;
    const record = await store.update(prepared.key, (current) => {
      fresh = current === undefined;
      if (current !== undefined) return current;
      const created = newRecord(prepared, policy, request, runtime.now(), engine.owner);
      created.seq = nextSeq();
      created.policySnapshot = snapshotOf(policy);
      return created;
    });
    if (record === undefined) throw new Error(`store did not keep ${prepared.key}`);
    if (record.fingerprint !== prepared.fingerprint) throw new KeyConflictError(prepared.key, record.state);
    if (fresh && events.listens('enqueued')) {
      events.emit('enqueued', {
        key: record.key,
        operation: `${record.request.method} ${record.request.url}`,
        fingerprint: record.fingerprint,
        policy: record.policy,
        deadlineAt: record.deadlineAt,
      });
    }
    return { record, fresh };
  }

  async function settleInto<T>(
    record: OperationRecord,
    request: Pick<OncelyRequest<T>, 'responseSchema'>,
    fromStore: boolean,
  ): Promise<SendResult<T>> {
    if (record.state !== 'succeeded' || record.result === undefined) throw failureError(record);
    const result = record.result;
    let data = bodyValue(result.body);
    if (request.responseSchema !== undefined) {
      const checked = await request.responseSchema['~standard'].validate(data);
      if (checked.issues !== undefined) {
        throw new ResponseValidationError(
          record.key,
          result.status,
          data,
          checked.issues.map((i) => i.message),
          record.attempts,
        );
      }
      data = checked.value;
    }
    return {
      key: record.key,
      status: result.status,
      headers: result.headers,
      data: data as T,
      replayed: result.replayed,
      fromStore,
      attempts: record.attempts.length,
    };
  }

  async function outcomeOf<T>(
    record: OperationRecord,
    request: Pick<OncelyRequest<T>, 'responseSchema'>,
    fromStore: boolean,
  ): Promise<Outcome<T>> {
    try {
      const result = await settleInto(record, request, fromStore);
      return { key: record.key, state: record.state, ok: true, result, record };
    } catch (error) {
      return { key: record.key, state: record.state, ok: false, error: error as Error, record };
    }
  }

  function guarded<T>(key: string, work: Promise<Outcome<T>>): Promise<Outcome<T>> {
    return work.catch(async (error: unknown) => {
      const record = await store.get(key).catch(() => undefined);
      return { key, state: record?.state ?? 'pending', ok: false, error: error as Error, record };
    });
  }

  const client: OncelyClient = {
    async send<T>(request: OncelyRequest<T>): Promise<SendResult<T>> {
      const { record, fresh } = await admit(request);
      if (!fresh && isTerminal(record.state)) return settleInto(record, request, true);
      // A record just written ahead is already claimed by this client: the loop need not read it back.
      const settled = await driveToEnd(record.key, record.scope, request.signal, fresh ? record : undefined);
      if (!isTerminal(settled.state)) throw suspendedError(settled, request.signal?.aborted === true);
      return settleInto(settled, request, false);
    },

    async enqueue<T>(request: OncelyRequest<T>): Promise<Enqueued<T>> {
      const { record, fresh } = await admit(request);
      const settled =
        !fresh && isTerminal(record.state)
          ? outcomeOf(record, request, true)
          : guarded(
              record.key,
              driveToEnd(record.key, record.scope, request.signal, fresh ? record : undefined).then((r) =>
                outcomeOf(r, request, false),
              ),
            );
      return { key: record.key, settled };
    },

    async resume(resumeOptions = {}) {
      const waitForLeases = resumeOptions.waitForLeases ?? false;
      const onOutcome = resumeOptions.onOutcome;
      const now = runtime.now();
      // Sweeping reads every finished record: at most once a minute, not on every resume.
      if (now - lastSweepAt >= SWEEP_INTERVAL_MS) await client.sweep();
      // Key and scope of each open record, in drive order, packed (see DriveList): with 100k open operations,
      // that is all the pass holds per operation that is not in flight.
      const summary = emptySummary();
      const candidates = DriveList.from(
        orderForResume(
          freeToDrive(await summaries(store, { state: ['pending', 'in_flight'] }), (r) => {
            const free =
              waitForLeases || r.lease === undefined || r.lease.until <= now || r.lease.owner === engine.owner.id;
            if (!free && r.lease !== undefined) countHeld(summary, r.lease.until);
            return free;
          }),
        ),
      );
      let callbackError: { error: unknown } | undefined;
      // Counted, handed over, and let go: no outcome outlives its callback.
      const report = async (outcome: Outcome): Promise<void> => {
        countOutcome(summary, outcome.state);
        if (onOutcome === undefined) return;
        try {
          await onOutcome(outcome);
        } catch (error) {
          callbackError ??= { error };
        }
      };
      const skipped: ToDrive[] = [];
      // First pass: everything free. A record another owner claims meanwhile is
      // skipped, not waited on (several processes draining one store do not queue behind each other).
      const held = new Set<string>();
      await pool(candidates, options.concurrency ?? 8, async (item) => {
        const outcome = await guarded(
          item.key,
          drive(item.key, item.scope, undefined, 'skip', undefined, held).then((r) => outcomeOf(r, {}, false)),
        );
        if (!outcome.ok && !isTerminal(outcome.state) && waitForLeases && !shutdown.stopped) skipped.push(item);
        else if (!isTerminal(outcome.state) && isHeldElsewhere(outcome.record, engine.owner.id, runtime.now())) {
          countHeld(summary, outcome.record?.lease?.until ?? runtime.now());
        } else await report(outcome);
      });
      // Second pass (waitForLeases): wait for other owners to finish, or for their leases to expire and take over.
      await pool(skipped, options.concurrency ?? 8, async (item) => {
        await report(
          await guarded(
            item.key,
            drive(item.key, item.scope).then((r) => outcomeOf(r, {}, false)),
          ),
        );
      });
      if (callbackError !== undefined) throw callbackError.error;
      return summary;
    },

    get: (key) => store.get(key),
    list: (filter) => store.list(filter),
    quarantined: () => store.quarantined(),

    async retry(key) {
      const now = runtime.now();
      const updated = await store.update(key, (current) => {
        if (current === undefined) throw new NotFoundError(key);
        if (current.state !== 'blocked' && current.state !== 'unknown') {
          throw new InvalidStateError(
            key,
            current.state,
            `Only blocked or unknown operations can be retried (${key} is ${current.state})`,
          );
        }
        const policy = policyOfRecord(endpoints, current);
        const forgottenAt = current.createdAt + policy.keyRetentionMs;
        if (now >= forgottenAt) {
          throw new InvalidStateError(
            key,
            current.state,
            `The server has forgotten key ${key} (retention ended); send a new operation instead`,
          );
        }
        return reopen(current, now, Math.min(now + policy.deadlineMs, forgottenAt));
      });
      if (updated === undefined) throw new NotFoundError(key);
      return guarded(
        key,
        drive(key, updated.scope).then((r) => outcomeOf(r, {}, false)),
      );
    },

    async discard(key, discardOptions = {}) {
      if (running.has(key))
        throw new InvalidStateError(key, 'in_flight', `Operation ${key} is being driven; it cannot be discarded now`);
      // Checked on the record as stored right before deleting it (not on a copy read earlier).
      let refusal: InvalidStateError | undefined;
      let found = false;
      await store.update(key, (current) => {
        found = current !== undefined;
        if (current === undefined) return undefined;
        refusal = discardRefusal(current, runtime.now(), discardOptions.force === true);
        return current;
      });
      if (!found) throw new NotFoundError(key);
      if (refusal !== undefined) throw refusal;
      await store.delete(key);
    },

    async sweep() {
      const now = runtime.now();
      lastSweepAt = now;
      const finished = await summaries(store, { state: ['succeeded', 'blocked', 'failed', 'unknown'] });
      let removed = 0;
      for (const record of finished) {
        if (record.retainUntil !== undefined && record.retainUntil <= now) {
          await store.delete(record.key);
          removed++;
        }
      }
      return removed;
    },

    on: (event, fn) => events.on(event, fn),

    policyFor: (method, url) => endpoints.resolve(method, resolveUrl(url, options.baseUrl)),

    async close() {
      shutdown.stop();
      await Promise.allSettled([...running.values()]);
      // A store passed in belongs to the caller (it may be shared); only close our own.
      if (options.store === undefined) await store.close?.();
    },
  };
  return client;
}

export { isOncelyError };
