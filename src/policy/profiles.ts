/**
 * Provider profiles: how one API family speaks idempotency, as plain data.
 * Providers disagree on status codes (a 409 is "in progress" for one and a
 * business conflict for another), so classification reads the profile of the
 * endpoint instead of hard-coding one reading. Add one with `defineProfile`.
 */
import type { ProviderError } from '../errors.js';
import type { AttemptClass, EffectStatus } from '../model.js';

/** A rule on the response body (parsed JSON): `path` into it equals `equals`, or the text contains `contains`. */
export interface BodyRule {
  status: readonly number[];
  path?: readonly string[];
  equals?: string;
  contains?: string;
  class: AttemptClass;
  /**
   * What the answer tells of the effect, when the status alone would tell
   * it wrong (see `effectOf` in flow/decide/classify.ts). A "key reused with a
   * different payload" refusal is `unknown`: this request was refused, but
   * the provider holds another one under its key, which may have done what
   * this one asks (another device or process, an older version of the app).
   */
  effect?: EffectStatus;
  /** Why, for diagnostics. */
  note: string;
}

/** A rule on a response header, e.g. `Stripe-Should-Retry: false`. */
export interface HeaderRule {
  header: string;
  equals: string;
  class: AttemptClass;
  note: string;
}

export interface ProviderProfile {
  name: string;
  /** Header that carries the key. @default 'Idempotency-Key' */
  keyHeader: string;
  /** Longest key the provider accepts. */
  maxKeyLength: number;
  /** How long the provider remembers a key; an operation's deadline never exceeds it. */
  keyRetentionMs: number;
  /** Status → class, over the base table. */
  statuses: Readonly<Record<number, AttemptClass>>;
  /** Statuses that mean "not applied": a stop after only these is `failed`, not `unknown`. */
  notApplied: readonly number[];
  bodyRules: readonly BodyRule[];
  headerRules: readonly HeaderRule[];
  /** Response header whose value `true` marks a replayed answer. */
  replayedHeader?: string;
  /**
   * How the provider writes an error body, read into `OperationError.providerError`:
   * `'stripe'` (`{"error": {"code", "decline_code", "type", "message"}}`) or
   * `'problem-details'` (RFC 9457 `application/problem+json`).
   * Plain data, so it survives in the policy stored with each record.
   * @default 'problem-details'
   */
  errorFormat?: 'stripe' | 'problem-details';
  /**
   * Reads the provider's code from a final non-2xx body (parsed JSON or text),
   * for formats `errorFormat` does not know. A function is not stored with
   * records: an operation resumed by another process falls back to `errorFormat`.
   * @example { errorOf: (body) => ({ code: (body as { errorCode?: string }).errorCode }) }
   */
  errorOf?: (
    body: unknown,
    status: number,
    headers: Readonly<Record<string, string>>,
  ) => Omit<ProviderError, 'profile'> | undefined;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * The problem type `oncely/server` answers (409) when a key's claim ended
 * without an outcome (the server stopped mid-request): the request may have
 * taken effect and will not be run again, so no retry can help. Both
 * built-in profiles read it as final with an unknown effect (`unknown`),
 * not as "in progress" (which would retry until the deadline).
 */
export const OUTCOME_UNKNOWN_PROBLEM_TYPE = 'urn:oncely:idempotency:outcome-unknown';

const outcomeUnknownRule: BodyRule = {
  status: [409],
  path: ['type'],
  equals: OUTCOME_UNKNOWN_PROBLEM_TYPE,
  class: 'permanent',
  effect: 'unknown',
  note: 'the server lost the outcome of this key: it may have taken effect, and it will not run it again',
};

/**
 * The design's base table, shared by the built-in profiles:
 * retryable 408/425/429/500/502/503/504, correctable 400/401/403/404/405/410/413/415/422,
 * and 409 meaning "the same key is still in progress".
 */
export const BASE_STATUSES: Readonly<Record<number, AttemptClass>> = {
  400: 'correctable',
  401: 'correctable',
  403: 'correctable',
  404: 'correctable',
  405: 'correctable',
  408: 'retryable',
  409: 'in_progress',
  410: 'correctable',
  413: 'correctable',
  415: 'correctable',
  422: 'correctable',
  425: 'retryable',
  429: 'retryable',
  500: 'retryable',
  502: 'retryable',
  503: 'retryable',
  504: 'retryable',
};

/** 408, 425, 429 and 503 say the request was not processed; 500/502/504 do not. */
export const BASE_NOT_APPLIED: readonly number[] = [408, 425, 429, 503];

/**
 * draft-ietf-httpapi-idempotency-key-header: 400 when the key is missing,
 * 409 while a request with the key is in flight, 422 when the key is reused
 * with another payload. A 422 that does not mention idempotency is an
 * ordinary validation error (correctable).
 */
export const ietfProfile: ProviderProfile = {
  name: 'ietf',
  keyHeader: 'Idempotency-Key',
  maxKeyLength: 255,
  keyRetentionMs: 24 * HOUR_MS,
  statuses: BASE_STATUSES,
  notApplied: BASE_NOT_APPLIED,
  bodyRules: [
    outcomeUnknownRule,
    {
      status: [422],
      contains: 'idempotency',
      class: 'permanent',
      effect: 'unknown',
      note: 'key reused with a different payload',
    },
  ],
  headerRules: [],
  replayedHeader: 'Idempotent-Replayed',
  errorFormat: 'problem-details',
};

/**
 * Stripe: keys up to 255 characters, kept at least 24 hours; 400
 * `idempotency_error` means the key was reused with other parameters; 409
 * `idempotency_key_in_use` means a request with the key is still running;
 * `Stripe-Should-Retry` overrides the status reading; replays carry
 * `Idempotent-Replayed: true`.
 *
 * 402 is a card decline (`card_error`, e.g. `decline_code: insufficient_funds`):
 * the charge was attempted and refused, a definite "not applied" answer.
 * It is `permanent`, not `correctable`: Stripe stores the decline under the
 * key, so `retry(key)` would replay the same 402; the next try is a new
 * operation (new key) with another payment method. Listed in `notApplied`,
 * so a decline ends `failed` (never `unknown`), whatever `otherStatus` says.
 */
export const stripeProfile: ProviderProfile = {
  name: 'stripe',
  keyHeader: 'Idempotency-Key',
  maxKeyLength: 255,
  keyRetentionMs: 24 * HOUR_MS,
  statuses: { ...BASE_STATUSES, 402: 'permanent', 409: 'permanent' },
  notApplied: [...BASE_NOT_APPLIED, 402],
  bodyRules: [
    outcomeUnknownRule,
    {
      status: [409],
      path: ['error', 'code'],
      equals: 'idempotency_key_in_use',
      class: 'in_progress',
      note: 'a request with this key is still being processed',
    },
    {
      status: [400],
      path: ['error', 'type'],
      equals: 'idempotency_error',
      class: 'permanent',
      effect: 'unknown',
      note: 'key reused with different parameters',
    },
  ],
  headerRules: [
    { header: 'Stripe-Should-Retry', equals: 'true', class: 'retryable', note: 'Stripe asked for a retry' },
    { header: 'Stripe-Should-Retry', equals: 'false', class: 'permanent', note: 'Stripe said a retry will not help' },
  ],
  replayedHeader: 'Idempotent-Replayed',
  errorFormat: 'stripe',
};

export const builtInProfiles: Readonly<Record<string, ProviderProfile>> = {
  ietf: ietfProfile,
  stripe: stripeProfile,
};

/**
 * Builds a profile from a base (default `ietf`) and overrides.
 *
 * @example
 * const acme = defineProfile({ name: 'acme', keyHeader: 'X-Request-Id', statuses: { 409: 'permanent' } });
 */
export function defineProfile(
  overrides: Partial<ProviderProfile> & { name: string },
  base: ProviderProfile = ietfProfile,
): ProviderProfile {
  return {
    ...base,
    ...overrides,
    statuses: { ...base.statuses, ...overrides.statuses },
  };
}
