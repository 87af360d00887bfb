/**
 * One error base for everything oncely throws, with literal `name`s and
 * stable `code`s, so callers can branch on `error.code` without `instanceof`
 * (which breaks across realms: iframes, workers, duplicated bundles).
 */

import { DEFAULT_REMEDIATION, GENERIC_REMEDIATION } from './model/remediation.js';
import { countAttempts } from './model/vocabulary.js';

export { DEFAULT_REMEDIATION } from './model/remediation.js';
export { countAttempts } from './model/vocabulary.js';

import type { ErrorResponse, ProviderError, RawResult } from './model/error-response.js';
import type { AttemptSummary, OmittedAttempts, OperationState, StopReason } from './model.js';

export type { ErrorResponse, ProblemDetails, ProviderError, RawResult } from './model/error-response.js';

const BRAND = Symbol.for('oncely.error');

export type OncelyErrorCode =
  | 'invalid_options'
  | 'invalid_request'
  | 'key_conflict'
  | 'operation_failed'
  | 'response_invalid'
  | 'response_parse'
  | 'lease_lost'
  | 'not_found'
  | 'store_corrupt'
  | 'invalid_state'
  | 'lock_timeout'
  | 'store_owned'
  | 'store_unavailable';

export interface OncelyErrorDetails {
  /** The idempotency key of the operation, when there is one. */
  key?: string | undefined;
  /** The operation's state when the error was raised. */
  state?: OperationState | undefined;
  /** Why the operation stopped. */
  reason?: StopReason | undefined;
  /** Every attempt made so far, oldest first (exposed as `history`; `attempts` is its count). */
  history?: readonly AttemptSummary[] | undefined;
  /**
   * @deprecated The attempt list under its former name: read as `history`.
   * Kept so call sites written before `history` existed keep compiling.
   */
  attempts?: readonly AttemptSummary[] | undefined;
  /** What the caller can do next; a default per `code` when omitted. */
  remediation?: string | undefined;
  /** The attempts dropped from a long `history` (the record's `attemptsOmitted`): counted in `attempts`/`notSent`. */
  omitted?: OmittedAttempts | undefined;
  cause?: unknown;
}

export class OncelyError extends Error {
  /**
   * Each subclass narrows it to its own literal (`'OperationError'`, …), so
   * `error.name` can be switched on. Left `string` here: a store's own
   * subclass may name itself.
   */
  override name: string = 'OncelyError';
  readonly code: OncelyErrorCode;
  readonly key: string | undefined;
  readonly state: OperationState | undefined;
  readonly reason: StopReason | undefined;
  /**
   * How many attempts may have reached the server: the same count as
   * `SendResult.attempts` (tries that provably never left are `notSent`).
   */
  readonly attempts: number;
  /** Tries that provably never left this machine (connection refused, offline): not in `attempts`. */
  readonly notSent: number;
  /** The attempts themselves, oldest first (the record keeps the first and the latest of a long history). */
  readonly history: readonly AttemptSummary[];
  /** What the caller can do next, in one or two sentences. */
  readonly remediation: string;
  readonly [BRAND] = true;

  constructor(code: OncelyErrorCode, message: string, details: OncelyErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.key = details.key;
    this.state = details.state;
    this.reason = details.reason;
    this.history = details.history ?? details.attempts ?? [];
    const counts = countAttempts(this.history, details.omitted);
    this.attempts = counts.attempts;
    this.notSent = counts.notSent;
    this.remediation =
      details.remediation ?? DEFAULT_REMEDIATION[code as keyof typeof DEFAULT_REMEDIATION] ?? GENERIC_REMEDIATION;
  }
}

/** Options failed validation at construction. `field` names the offending option. */
export class InvalidOptionsError extends OncelyError {
  override name = 'InvalidOptionsError' as const;
  declare readonly code: 'invalid_options';
  readonly field: string;
  constructor(field: string, message: string) {
    super('invalid_options', `Invalid option \`${field}\`: ${message}`);
    this.field = field;
  }
}

/** A request given to `send`/`enqueue` is malformed. Nothing was stored or sent. */
export class InvalidRequestError extends OncelyError {
  override name = 'InvalidRequestError' as const;
  declare readonly code: 'invalid_request';
  readonly field: string;
  constructor(field: string, message: string) {
    super('invalid_request', `Invalid request \`${field}\`: ${message}`);
    this.field = field;
  }
}

/**
 * The same idempotency key was used with a different request (method, URL or
 * body). Refused locally before any network: the server would answer with a
 * conflict at best, or bind one key to two operations at worst.
 */
export class KeyConflictError extends OncelyError {
  override name = 'KeyConflictError' as const;
  declare readonly code: 'key_conflict';
  constructor(key: string, state: OperationState) {
    super(
      'key_conflict',
      `Idempotency key ${key} is already bound to a different request (state ${state}); use a new key for new work.`,
      { key, state },
    );
  }
}

/**
 * The operation ended without success: `state` is `blocked` (fix the input or
 * credentials, then `retry(key)`), `failed` (definitely not done) or `unknown`
 * (may have taken effect: reconcile, or `retry(key)` with the same key).
 *
 * @example
 * catch (error) {
 *   if (hasErrorCode(error, 'operation_failed') && error.providerError?.declineCode === 'insufficient_funds') {
 *     showMessage('Your card has insufficient funds.');
 *   }
 * }
 */
export class OperationError extends OncelyError {
  override name = 'OperationError' as const;
  declare readonly code: 'operation_failed';
  /** HTTP status of the last answer, if there was one. */
  readonly status: number | undefined;
  /**
   * Some attempt may have reached the server and taken effect, whatever the
   * state (a `blocked` operation too): look it up by its key before anything
   * else, and never send it again under a new key.
   */
  readonly mayHaveTakenEffect: boolean;
  /** The server's final non-2xx answer, when there was one (bounded by `maxResponseBytes`). */
  readonly response: ErrorResponse | undefined;
  /** The provider's code, decline code and message, read from `response` by the endpoint's profile. */
  readonly providerError: ProviderError | undefined;
  constructor(
    message: string,
    details: OncelyErrorDetails & {
      status?: number | undefined;
      remediation: string;
      mayHaveTakenEffect?: boolean;
      response?: ErrorResponse | undefined;
      providerError?: ProviderError | undefined;
    },
  ) {
    super('operation_failed', message, details);
    this.status = details.status;
    this.mayHaveTakenEffect = details.mayHaveTakenEffect ?? false;
    this.response = details.response;
    this.providerError = details.providerError;
  }
}

/**
 * The server answered 2xx (the effect happened) but the body did not match
 * the response schema. The operation is `succeeded` and the raw result is
 * kept (here as `result`, and in the store); it is never retried.
 */
export class ResponseValidationError extends OncelyError {
  override name = 'ResponseValidationError' as const;
  declare readonly code: 'response_invalid';
  readonly status: number;
  /** The body that failed the schema (the same as `result.body`). */
  readonly body: unknown;
  /** The raw result the server sent: status, kept headers and body. */
  readonly result: RawResult;
  readonly issues: readonly string[];
  constructor(
    key: string,
    status: number,
    body: unknown,
    issues: readonly string[],
    history: readonly AttemptSummary[],
    headers: Readonly<Record<string, string>> = {},
    /** What the schema threw, when it threw instead of returning issues. */
    cause?: unknown,
  ) {
    super(
      'response_invalid',
      `The server completed operation ${key} (status ${status}) but the response failed validation: ${issues.join('; ')}`,
      { key, state: 'succeeded', history, cause },
    );
    this.status = status;
    this.body = body;
    this.result = { status, headers, body };
    this.issues = issues;
  }
}

/**
 * Another owner (tab or process) took over the operation; this one must stop writing.
 *
 * @internal Caught inside the loop, which stops quietly; never reaches a caller.
 */
export class LeaseLostError extends OncelyError {
  override name = 'LeaseLostError' as const;
  declare readonly code: 'lease_lost';
  constructor(key: string) {
    super('lease_lost', `Lost the lease on operation ${key} to another owner`, { key });
  }
}

/** No operation with this key is stored. */
export class NotFoundError extends OncelyError {
  override name = 'NotFoundError' as const;
  declare readonly code: 'not_found';
  constructor(key: string) {
    super('not_found', `No operation with key ${key}`, { key });
  }
}

/**
 * The operation (or the client) is not in a state that allows what was
 * asked: discarding one in flight, sending after `close()`.
 */
export class InvalidStateError extends OncelyError {
  override name = 'InvalidStateError' as const;
  declare readonly code: 'invalid_state';
  constructor(key: string | undefined, state: OperationState | undefined, message: string) {
    super('invalid_state', message, { key, state });
  }
}

/** A stored record failed validation; it was quarantined, not deleted. */
export class CorruptRecordError extends OncelyError {
  override name = 'CorruptRecordError' as const;
  declare readonly code: 'store_corrupt';
  readonly id: string;
  constructor(id: string, message: string, cause?: unknown) {
    super('store_corrupt', `Stored record ${id} is corrupt: ${message}`, { key: id, cause });
    this.id = id;
  }
}

/**
 * What `send` rejects with when the caller's signal stopped the operation: a
 * `DOMException` named as `fetch` names it (the signal's reason: `AbortError`,
 * or `TimeoutError` for `AbortSignal.timeout()`), with the fields of the
 * `OperationError` it stands for copied onto it (that error is its `cause`).
 */
export type OperationAbortError = Omit<DOMException, 'code' | 'name'> &
  // DOMException's numeric `code` is shadowed by oncely's, as at run time (flow/calls/abort-error.ts).
  Omit<OperationError, 'name' | 'message' | 'stack' | 'cause'> & {
    readonly name: 'AbortError' | 'TimeoutError';
    readonly cause: OperationError;
  };

/**
 * Every error oncely raises, as a union discriminated by `code` (and by
 * `name`). The file store's two (`LockTimeoutError`, `OwnedStoreError`, from
 * `oncely/node`) and `StoreUnavailableError` appear by their shape, so this
 * module (the bottom layer) never imports Node code or the flow.
 */
export type OncelyErrorUnion =
  | InvalidOptionsError
  | InvalidRequestError
  | KeyConflictError
  | OperationError
  | OperationAbortError
  | ResponseValidationError
  | ResponseParseError
  | LeaseLostError
  | NotFoundError
  | InvalidStateError
  | CorruptRecordError
  | (OncelyError & { readonly code: 'lock_timeout'; name: 'LockTimeoutError'; readonly path: string })
  | (OncelyError & { readonly code: 'store_unavailable'; name: 'StoreUnavailableError' })
  | (OncelyError & {
      readonly code: 'store_owned';
      name: 'OwnedStoreError';
      readonly dir: string;
      readonly mayHaveBeenWritten: boolean;
    });

/**
 * What `isOncelyError` narrows to, and the `error` of a failed `Outcome`:
 * the union above, with the fields a caller acts on readable on every
 * member (`undefined` where that kind of error has none), so
 * `if (isOncelyError(e) && e.mayHaveTakenEffect)` needs no cast, and a check
 * of `code` or `name` narrows to the exact class.
 */
export type AnyOncelyError = OncelyErrorUnion &
  Partial<Pick<OperationError, 'mayHaveTakenEffect' | 'response' | 'providerError' | 'status'>>;

/** True for any error raised by oncely, from any realm or bundle copy. */
export function isOncelyError(value: unknown): value is AnyOncelyError {
  return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
}

/** The class raised for each code, so `hasErrorCode` narrows to its fields (`providerError`, `field`, …). */
export interface OncelyErrorsByCode {
  invalid_options: InvalidOptionsError;
  invalid_request: InvalidRequestError;
  key_conflict: KeyConflictError;
  operation_failed: OperationError;
  response_invalid: ResponseValidationError;
  lease_lost: LeaseLostError;
  not_found: NotFoundError;
  store_corrupt: CorruptRecordError;
  invalid_state: InvalidStateError;
  response_parse: ResponseParseError;
}

/**
 * True when `value` is an oncely error with the given code, narrowed to the
 * class of that code (works across realms, unlike `instanceof`).
 * @example if (hasErrorCode(error, 'operation_failed')) show(error.providerError?.message);
 */
export function hasErrorCode<C extends OncelyErrorCode>(
  value: unknown,
  code: C,
): value is C extends keyof OncelyErrorsByCode ? OncelyErrorsByCode[C] : OncelyError & { code: C } {
  return isOncelyError(value) && value.code === code;
}

/**
 * The server answered 2xx with a body labelled JSON (`application/json` or
 * `+json`) that is not JSON. The effect happened: the operation is
 * `succeeded`, its record keeps the answer, and it is never resent (a repeat
 * `send` rejects the same way, from the store). `text` is the body as
 * received, for logging or reconciling by hand.
 */
export class ResponseParseError extends OncelyError {
  override name = 'ResponseParseError' as const;
  declare readonly code: 'response_parse';
  readonly status: number;
  /** The body as received (decoded as UTF-8). */
  readonly text: string;
  constructor(key: string, status: number, text: string, attempts: readonly AttemptSummary[], cause?: unknown) {
    super(
      'response_parse',
      `The server completed operation ${key} (status ${status}) but its body, labelled JSON, is not JSON; the raw text is on \`text\``,
      { key, state: 'succeeded', attempts, cause },
    );
    this.status = status;
    this.text = text;
  }
}
