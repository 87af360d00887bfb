/**
 * Turning a settled record into what a caller gets: a `SendResult` (the
 * stored response, validated against the caller's schema), a typed error, or
 * an `Outcome` that carries either and never rejects. Kept apart from the
 * loop: the loop settles records, this reads them back out.
 */
import {
  type AnyOncelyError,
  countAttempts,
  isOncelyError,
  OperationError,
  ResponseParseError,
  ResponseValidationError,
} from '../../errors.js';
import { STORED_REMEDIATION } from '../../model/remediation.js';
import type { OperationRecord, OperationState } from '../../model.js';
import type { ProviderProfile } from '../../policy/profiles.js';
import type { Runtime } from '../../runtime.js';
import type { OperationStore } from '../../store/store.js';
import { mayHaveTakenEffect } from '../decide/decide.js';
import type { OncelyRequest, StandardSchemaV1 } from '../request/operation.js';
import { bodyValue, unparsedJsonText } from '../transport/result.js';

/** A settled success. */
export interface SendResult<T = unknown> {
  key: string;
  status: number;
  headers: Record<string, string>;
  /** The body: parsed JSON, text or bytes (validated when a schema was given). */
  data: T;
  /** The server said this answer replays an earlier one. */
  replayed: boolean;
  /** Answered from the local store, without network (the key had already succeeded). */
  fromStore: boolean;
  /**
   * Attempts that may have reached the server: what its log shows, and what
   * `maxAttempts` limits. A payment the server saw once says 1, however
   * many tries were refused before it.
   */
  attempts: number;
  /** Tries that provably never left this machine (connection refused, offline), not counted in `attempts`. */
  notSent: number;
  /** Known from reconciliation (the endpoint's `reconcile` hook or `settle`), not from an answer to an attempt. */
  reconciled?: true;
}

/**
 * What `enqueue(...).settled` and `retry` resolve with, and what `resume`
 * reports per operation. Never a rejection. Discriminated by `ok`:
 * `if (o.ok) o.result.data` needs no `!`, and a failure always carries an
 * oncely error (`o.error.code`, `o.error.mayHaveTakenEffect`).
 */
export type Outcome<T = unknown> = OutcomeSucceeded<T> | OutcomeFailed;

/** A settled success: the operation is `succeeded` and its answer passed the schema. */
export interface OutcomeSucceeded<T = unknown> {
  ok: true;
  key: string;
  state: 'succeeded';
  /** Attempts that may have reached the server (as on `SendResult`). */
  attempts: number;
  /** Tries that provably never left this machine. */
  notSent: number;
  result: SendResult<T>;
  error?: undefined;
  record: OperationRecord | undefined;
}

/**
 * Anything else: the operation stopped (`blocked`, `failed`, `unknown`),
 * succeeded but its answer failed the schema (`state` `succeeded`, `error`
 * a `ResponseValidationError`), or is not done (`pending`, `in_flight`:
 * another owner holds it, the client closed).
 */
export interface OutcomeFailed {
  ok: false;
  key: string;
  state: OperationState;
  /** Attempts that may have reached the server (as on the error). */
  attempts: number;
  /** Tries that provably never left this machine. */
  notSent: number;
  result?: undefined;
  error: AnyOncelyError;
  record: OperationRecord | undefined;
}

/** What failure-error.ts uses of the client, handed to it (it imports only types: no shared chunk). */
export const FAILURE_KIT = { OperationError, mayHaveTakenEffect };
export type FailureKit = typeof FAILURE_KIT;

/** What schema-check.ts uses of the client, handed to it (it imports only types: no shared chunk). */
export const SCHEMA_KIT = { ResponseValidationError };
export type SchemaKit = typeof SCHEMA_KIT;

/**
 * A module loaded with `import()` the first time it is needed, shared by
 * every caller; a failed load is tried again by the next caller. `runtime`,
 * when given, is told of the load as real work.
 */
function loader<T>(load: () => Promise<T>): (runtime?: Pick<Runtime, 'track'>) => Promise<T> {
  let loading: Promise<T> | undefined;
  return (runtime) => {
    if (loading === undefined) {
      const started = load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      loading = started;
      if (runtime !== undefined) void runtime.track(started).catch(() => undefined);
    }
    return loading;
  };
}

/** failure-error.ts: the errors of an operation that did not succeed, loaded the first time one is met. */
const failureErrors = /* @__PURE__ */ loader(() => import('./failure-error.js'));

/** suspended-error.ts: the error of a send interrupted before it settled, loaded the first time one is. */
const suspendedErrors = /* @__PURE__ */ loader(() => import('./suspended-error.js'));

/**
 * schema-check.ts: a 2xx body checked against the caller's `responseSchema`,
 * loaded when a request with a schema is admitted (send.ts starts it, so it
 * arrives while the attempt is out) or, at the latest, once its answer is in.
 */
export const schemaCheck = /* @__PURE__ */ loader(() => import('./schema-check.js'));

/**
 * The error for a record that ended other than succeeded (failure-error.ts).
 * If it cannot be loaded (a chunk the page could not fetch), the caller
 * still gets an oncely error for this operation, judged from the record
 * (whether it may have taken effect, not to send it again under a new key),
 * with the load's error as `cause`.
 */
async function failureOf(
  record: OperationRecord,
  profile: ProviderProfile | undefined,
  runtime: Pick<Runtime, 'track'> | undefined,
): Promise<AnyOncelyError> {
  try {
    return (await failureErrors(runtime)).failureError(FAILURE_KIT, record, profile);
  } catch (error) {
    return asOncelyError(error, record);
  }
}

/**
 * The error for an operation the caller stopped waiting for (`aborted`), or
 * the client closed on, before it settled (`inMemory`: kept in memory only,
 * nothing will resume it). Built by suspended-error.ts; if that cannot load,
 * an oncely error judged from the record as `failureOf`'s is, still saying
 * whether the caller's abort stopped it (so it still rejects as an `AbortError`).
 */
export async function suspendedOf(
  record: OperationRecord,
  aborted: boolean,
  inMemory: boolean,
  runtime: Pick<Runtime, 'track'>,
): Promise<AnyOncelyError> {
  try {
    return (await suspendedErrors(runtime)).suspendedError(FAILURE_KIT, record, aborted, inMemory);
  } catch (error) {
    return asOncelyError(error, record, record.key, record.state, aborted ? 'aborted' : undefined);
  }
}

/**
 * The caller's result for a settled `record`; rejects with a typed error unless it succeeded (and validates).
 * `runtime`: the client's, which a first failure's module load is reported to.
 */
export async function resultOf<T>(
  record: OperationRecord,
  request: Pick<OncelyRequest<T>, 'responseSchema'>,
  fromStore: boolean,
  profile?: ProviderProfile,
  runtime?: Pick<Runtime, 'track'>,
): Promise<SendResult<T>> {
  if (record.state !== 'succeeded' || record.result === undefined) throw await failureOf(record, profile, runtime);
  const result = record.result;
  // Decided from the stored answer, so every later send of this key rejects the same way, from the store.
  const unparsed = unparsedJsonText(result);
  if (unparsed !== undefined) throw new ResponseParseError(record.key, result.status, unparsed, record.attempts);
  let data = bodyValue(result.body);
  if (request.responseSchema !== undefined) data = await validated(record, data, request.responseSchema, runtime);
  const sent: SendResult<T> = {
    key: record.key,
    status: result.status,
    headers: result.headers,
    data: data as T,
    replayed: result.replayed,
    fromStore,
    ...countAttempts(record.attempts, record.attemptsOmitted),
  };
  if (result.reconciled === true) sent.reconciled = true;
  return sent;
}

/**
 * `data` as the caller's schema returns it (schema-check.ts). The server has
 * completed the operation whatever happens here: if that module cannot be
 * loaded (a chunk the page could not fetch), the caller gets the same
 * `ResponseValidationError` a schema that threw gives (completed, never to be
 * sent again; the raw result kept, the load's error as `cause`). A later send
 * of the key checks the stored answer again.
 */
async function validated(
  record: OperationRecord,
  data: unknown,
  schema: StandardSchemaV1,
  runtime: Pick<Runtime, 'track'> | undefined,
): Promise<unknown> {
  let check: typeof import('./schema-check.js');
  try {
    check = await schemaCheck(runtime);
  } catch (error) {
    const result = record.result as NonNullable<OperationRecord['result']>;
    const issue = `the response schema could not be run: ${(error as Error | null)?.message ?? String(error)}`;
    throw new ResponseValidationError(record.key, result.status, data, [issue], record.attempts, result.headers, error);
  }
  return check.validated(SCHEMA_KIT, record, data, schema);
}

/** `resultOf`, or its error, as an `Outcome`. */
export async function outcomeOf<T>(
  record: OperationRecord,
  request: Pick<OncelyRequest<T>, 'responseSchema'>,
  fromStore: boolean,
  profile?: ProviderProfile,
  runtime?: Pick<Runtime, 'track'>,
): Promise<Outcome<T>> {
  try {
    const result = await resultOf(record, request, fromStore, profile, runtime);
    return { key: record.key, state: 'succeeded', ok: true, result, record, ...counts(record) };
  } catch (error) {
    const failed = asOncelyError(error, record);
    return { key: record.key, state: record.state, ok: false, error: failed, record, ...counts(record) };
  }
}

/**
 * `work`, with a rejection (the loop failed, the store threw) turned into a
 * failed outcome carrying the record as stored now, if it can be read: an
 * outcome promise never rejects.
 */
export function guarded<T>(store: OperationStore, key: string, work: Promise<Outcome<T>>): Promise<Outcome<T>> {
  return work.catch(async (error: unknown) => {
    const record = await store.get(key).catch(() => undefined);
    // Gone from the store: the state the loop last knew, which its error carries (flow/drive/run.ts, `removedError`).
    const state = record?.state ?? (isOncelyError(error) ? error.state : undefined) ?? 'pending';
    return { key, state, ok: false, error: asOncelyError(error, record, key, state), record, ...counts(record) };
  });
}

function counts(record: OperationRecord | undefined): { attempts: number; notSent: number } {
  return countAttempts(record?.attempts ?? [], record?.attemptsOmitted);
}

/**
 * `error` as an oncely error: one that is already passes through; anything
 * else (a store that threw, a bug) is wrapped, so a failed outcome's `error`
 * always has a `code`, a `remediation` and `mayHaveTakenEffect` judged from
 * the record, and the original stays its `cause`.
 */
function asOncelyError(
  error: unknown,
  record: OperationRecord | undefined,
  key = record?.key ?? '',
  state: OperationState = record?.state ?? 'pending',
  reason?: 'aborted',
): AnyOncelyError {
  if (isOncelyError(error)) return error;
  const message = (error as Error | null)?.message ?? String(error);
  return new OperationError(`Operation ${key} could not be driven (${state}): ${message}`, {
    key,
    state,
    reason,
    history: record?.attempts ?? [],
    omitted: record?.attemptsOmitted,
    cause: error,
    mayHaveTakenEffect: record === undefined ? true : mayHaveTakenEffect(record),
    remediation: STORED_REMEDIATION,
  });
}
