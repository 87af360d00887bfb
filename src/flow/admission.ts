/**
 * Admission: a new operation is checked and written ahead (stored, leased
 * to this client) before anything is sent, or the record already stored
 * under its key is found. Admissions of one scope are chained, so their
 * write-ahead order, and with it their send order, is the order of the calls.
 */
import { InvalidOptionsError, InvalidRequestError, InvalidStateError, KeyConflictError } from '../errors.js';
import { type OperationRecord, SEQ_PER_MS } from '../model.js';
import type { WriteOptions } from '../store/store.js';
import type { Engine } from './engine.js';
import { methodOf, type OncelyRequest, prepareOperation } from './operation.js';
import { sendsKey } from './outcome.js';
import { noop } from './settle-errors.js';
import { parseBase, pathWithinBase, resolveUrl } from './target.js';
import { create } from './transitions.js';

/** The record of an admitted request, and whether this call wrote it (false: it was stored already). */
export interface Admitted {
  record: OperationRecord;
  fresh: boolean;
  /**
   * The record lives in memory only (it sends no key and nothing asked to
   * persist it) and this call holds it: `store.release(key)` once the
   * caller has its answer (see flow/placement.ts).
   */
  held: boolean;
}

export class Admission {
  readonly #engine: Engine;
  readonly #baseUrl: string | undefined;
  readonly #base: URL | undefined;
  /** Header names never stored (lower case): the credentials, and the client's `deniedHeaders`. */
  readonly #denied: ReadonlySet<string>;
  /** Admissions of one scope, chained: write-ahead order (and so send order) is call order. */
  readonly #scopeAdmissions = new Map<string, Promise<unknown>>();
  #lastSeq = 0;

  constructor(engine: Engine, baseUrl: string | undefined, denied: ReadonlySet<string>) {
    this.#engine = engine;
    this.#baseUrl = baseUrl;
    this.#base = parseBase(baseUrl);
    this.#denied = denied;
  }

  /**
   * Validates, then writes the record ahead (or finds the existing one for
   * this key). `write.durability: 'relaxed'` only when nothing is promised
   * before the first attempt, whose start is the durable write (`send`); see
   * the README's durability section.
   */
  admit(request: OncelyRequest<unknown>, write?: WriteOptions): Promise<Admitted> {
    const { runtime, shutdown } = this.#engine;
    if (shutdown.stopped) {
      // Refused before anything is written: nothing is queued that the caller would think gone.
      return Promise.reject(
        new InvalidStateError(undefined, undefined, 'The client is closed; create a new one to send'),
      );
    }
    const scope = typeof request === 'object' && request !== null ? request.scope : undefined;
    // Hashing may run off the main thread (WebCrypto): real work, reported as such.
    if (scope === undefined) return runtime.track(this.#writeAhead(request, write));
    const previous = this.#scopeAdmissions.get(scope);
    const admitted = (previous === undefined ? Promise.resolve() : previous.then(noop, noop)).then(() =>
      runtime.track(this.#writeAhead(request, write)),
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

  async #writeAhead(request: OncelyRequest<unknown>, write: WriteOptions | undefined): Promise<Admitted> {
    if (typeof request !== 'object' || request === null) throw new InvalidOptionsError('request', 'must be an object');
    const { store, runtime, endpoints, events, owner } = this.#engine;
    const url = resolveUrl(request.url, this.#baseUrl);
    const method = methodOf(request);
    const policy = endpoints.resolve(method, url, pathWithinBase(url, this.#base));
    const prepared = await prepareOperation(request, url, policy, this.#denied, runtime);
    if (request.persist !== undefined && typeof request.persist !== 'boolean') {
      throw new InvalidRequestError('persist', 'must be true or false');
    }
    const held = !(request.persist ?? policy.persist) && !sendsKey(policy, method);
    if (held) store.hold(prepared.key);
    let fresh = false;
    let record: OperationRecord | undefined;
    try {
      record = await store.update(
        prepared.key,
        (current) => {
          fresh = current === undefined;
          if (current !== undefined) return current;
          return create(prepared, policy, request, runtime.now(), owner, this.#nextSeq());
        },
        write,
      );
      if (record === undefined) throw new Error(`store did not keep ${prepared.key}`);
      if (record.fingerprint !== prepared.fingerprint) throw new KeyConflictError(prepared.key, record.state);
    } catch (error) {
      if (held) store.release(prepared.key);
      throw error;
    }
    if (fresh && events.listens('enqueued')) {
      events.emit('enqueued', {
        key: record.key,
        operation: `${record.request.method} ${record.request.url}`,
        fingerprint: record.fingerprint,
        policy: record.policy,
        deadlineAt: record.deadlineAt,
      });
    }
    return { record, fresh, held };
  }
}
