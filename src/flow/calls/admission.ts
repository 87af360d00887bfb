/**
 * Admission: a new operation is checked and written ahead (stored, leased
 * to this client) before anything is sent, or the record already stored
 * under its key is found. Admissions of one scope are chained, so their
 * write-ahead order, and with it their send order, is the order of the calls.
 *
 * When nothing stands between the write-ahead and the first attempt (see
 * `startsAtOnce`), the write-ahead records attempt 1 as started too: one
 * durable store write before the first byte instead of two, and the loop
 * is started here, before any other call can see the record.
 */
import { InvalidOptionsError, InvalidRequestError, InvalidStateError, KeyConflictError } from '../../errors.js';
import type { Emitter, OncelyEvents } from '../../events.js';
import { TRACE_SPEC } from '../../model/exact.js';
import { exactCheck } from '../../model/spec.js';
import { type OperationRecord, SEQ_PER_MS, type StoredTrace } from '../../model.js';
import type { WriteOptions } from '../../store/store.js';
import { create, startAttempt } from '../decide/transitions.js';
import type { Loops } from '../drive/loops.js';
import { sendsKey } from '../drive/outcome.js';
import { mayStartNow, type StartedAttempt, startAtOnce } from '../drive/start-at-once.js';
import type { Engine } from '../engine/engine.js';
import { methodOf, type OncelyRequest, prepareOperation } from '../request/operation.js';
import { parseBase, pathWithinBase, resolveUrl } from '../request/target.js';
import { noop } from './settle-errors.js';
import { beforeSending } from './store-failure.js';

/** The record of an admitted request, and whether this call wrote it (false: it was stored already). */
export interface Admitted {
  record: OperationRecord;
  fresh: boolean;
  /**
   * The record lives in memory only (it sends no key and nothing asked to
   * persist it) and this call holds it: `store.release(key)` once the
   * caller has its answer (see flow/engine/placement.ts).
   */
  held: boolean;
}

/** How `admit` writes. */
export interface AdmitOptions {
  /**
   * How the write-ahead is stored when it is only the write-ahead: relaxed
   * when nothing is promised before the first attempt, whose start is the
   * durable write (`send`); see the README's durability section.
   */
  write?: WriteOptions;
  /**
   * Record attempt 1 as started in the write-ahead itself when it may go at
   * once (see `startsAtOnce`), and start its loop. That write is durable,
   * whatever `write` says.
   */
  startFirst?: boolean;
}

const isStoredTrace = exactCheck(TRACE_SPEC) as (raw: unknown) => raw is StoredTrace;

/** The trace context a `creating` listener gives; a malformed one is dropped (stored, the record would fail its check). */
function traceOfCaller(events: Emitter): StoredTrace | undefined {
  if (!events.listens('creating')) return undefined;
  const payload: OncelyEvents['creating'] = {};
  events.emit('creating', payload);
  return isStoredTrace(payload.trace) ? payload.trace : undefined;
}

export class Admission {
  readonly #engine: Engine;
  readonly #baseUrl: string | undefined;
  readonly #base: URL | undefined;
  /** Header names never stored (lower case): the credentials, and the client's `deniedHeaders`. */
  readonly #denied: ReadonlySet<string>;
  /** Admissions of one scope, chained: write-ahead order (and so send order) is call order. */
  readonly #scopeAdmissions = new Map<string, Promise<unknown>>();
  /**
   * Write-aheads that start their loop, by key, until the loop is running:
   * another admission of the same key waits for it, so it joins that loop
   * instead of claiming a record whose attempt is already on its way.
   */
  readonly #starting = new Map<string, Promise<unknown>>();
  readonly #loops: Loops;
  #lastSeq = 0;

  constructor(engine: Engine, loops: Loops, baseUrl: string | undefined, denied: ReadonlySet<string>) {
    this.#engine = engine;
    this.#loops = loops;
    this.#baseUrl = baseUrl;
    this.#base = parseBase(baseUrl);
    this.#denied = denied;
  }

  /** Validates, then writes the record ahead (or finds the existing one for this key). */
  admit(request: OncelyRequest<unknown>, options: AdmitOptions = {}): Promise<Admitted> {
    const { runtime, shutdown } = this.#engine;
    if (shutdown.stopped) {
      // Refused before anything is written: nothing is queued that the caller would think gone.
      return Promise.reject(
        new InvalidStateError(undefined, undefined, 'The client is closed; create a new one to send'),
      );
    }
    const scope = typeof request === 'object' && request !== null ? request.scope : undefined;
    // Asked now, in the caller's context: the trace context stored with a new record.
    const trace = traceOfCaller(this.#engine.events);
    // Hashing may run off the main thread (WebCrypto): real work, reported as such.
    if (scope === undefined) return runtime.track(this.#writeAhead(request, options, trace));
    const previous = this.#scopeAdmissions.get(scope);
    const admitted = (previous === undefined ? Promise.resolve() : previous.then(noop, noop)).then(() =>
      runtime.track(this.#writeAhead(request, options, trace)),
    );
    this.#scopeAdmissions.set(scope, admitted);
    const forget = (): void => {
      if (this.#scopeAdmissions.get(scope) === admitted) this.#scopeAdmissions.delete(scope);
    };
    admitted.then(forget, forget);
    return admitted;
  }

  /** A number that only grows: from the clock, so it keeps growing across restarts; +1 within a millisecond. */
  #nextSeq(): number {
    this.#lastSeq = Math.max(this.#engine.runtime.now() * SEQ_PER_MS, this.#lastSeq + 1);
    return this.#lastSeq;
  }

  async #writeAhead(
    request: OncelyRequest<unknown>,
    options: AdmitOptions,
    trace: StoredTrace | undefined,
  ): Promise<Admitted> {
    if (typeof request !== 'object' || request === null) throw new InvalidOptionsError('request', 'must be an object');
    const { store, runtime, endpoints, events, owner } = this.#engine;
    const url = resolveUrl(request.url, this.#baseUrl);
    const method = methodOf(request);
    const policy = endpoints.resolve(method, url, pathWithinBase(url, this.#base));
    const prepared = await prepareOperation(request, url, policy, this.#denied, runtime);
    if (request.persist !== undefined && typeof request.persist !== 'boolean') {
      throw new InvalidRequestError('persist', 'must be true or false');
    }
    const key = prepared.key;
    const earlier = this.#starting.get(key);
    if (earlier !== undefined) await earlier;
    let held = !(request.persist ?? policy.persist) && !sendsKey(policy, method);
    if (held) {
      // One key names one operation wherever it lives (DESIGN.md principle 14): held in memory while a
      // stored record has that key, it would shadow it (every read and write of the key would go to memory).
      const stored = await beforeSending(key, store.getStored(key));
      if (stored !== undefined && stored.fingerprint !== prepared.fingerprint) {
        throw new KeyConflictError(key, stored.state);
      }
      // The same operation, stored already (an earlier `persist: true`): joined there.
      held = stored === undefined;
    }
    if (held) store.hold(key);
    const startFirst = options.startFirst === true && this.#startsAtOnce(request, key);
    let fresh = false;
    let started: StartedAttempt | undefined;
    let record: OperationRecord | undefined;
    const writing = (async () => {
      try {
        record = await store.update(
          key,
          (current) => {
            fresh = current === undefined;
            if (current !== undefined) return current;
            const nowMs = runtime.now();
            const created = create(prepared, policy, request, nowMs, owner, this.#nextSeq(), trace);
            started = startFirst ? startAtOnce(this.#engine, created, policy, request.signal, nowMs) : undefined;
            return started === undefined ? created : startAttempt(created, owner, nowMs, started.timeoutMs);
          },
          // Durable when it may start attempt 1.
          startFirst ? undefined : options.write,
        );
        if (record === undefined) throw new Error(`store did not keep ${key}`);
        if (record.fingerprint !== prepared.fingerprint) throw new KeyConflictError(key, record.state);
      } catch (error) {
        if (held) store.release(key);
        throw error;
      }
      if (fresh && events.listens('enqueued')) {
        events.emit('enqueued', {
          key,
          operation: `${record.request.method} ${record.request.url}`,
          fingerprint: record.fingerprint,
          policy: record.policy,
          deadlineAt: record.deadlineAt,
          trace: record.trace,
        });
      }
      // Started here, before any other admission of this key can see the record (see `#starting`).
      if (fresh && started !== undefined)
        void this.#loops.drive(key, undefined, request.signal, 'wait', { record, started });
      return record;
    })();
    if (startFirst) {
      const done = writing.then(noop, noop);
      this.#starting.set(key, done);
      void done.then(() => {
        if (this.#starting.get(key) === done) this.#starting.delete(key);
      });
    }
    // Attempt 1 leaves only once this write resolved: a failure here sent nothing.
    return { record: await beforeSending(key, writing), fresh, held };
  }

  /**
   * Attempt 1 may be recorded as started with the write-ahead (flow/drive/start-at-once.ts
   * has the last word, at the time of the write) unless the loop would not
   * start at once anyway: it waits for its scope's turn, runs elsewhere
   * (dispatched to another tab), or must call or wait for something first.
   */
  #startsAtOnce(request: OncelyRequest<unknown>, key: string): boolean {
    return request.scope === undefined && this.#loops.runsHere(key) && mayStartNow(this.#engine, request.signal);
  }
}
