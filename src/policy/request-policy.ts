/**
 * The endpoint policy's rules for what a request may carry into the store
 * and how much of an answer is read. Part of `PolicyOptions` (options.ts),
 * kept here beside the request validation that applies them.
 */
import { InvalidOptionsError } from '../errors.js';
import { CREDENTIAL_HEADERS, HEADER_NAME } from '../model.js';
import { bool, type Check, fail, list, num, str } from './check.js';
import type { ProviderProfile } from './profiles.js';

export interface RequestPolicyOptions {
  /**
   * Request header names stored with an operation (and resent on every
   * attempt) besides `Content-Type`, `Accept` and `Content-Language`. A
   * request carrying any other header is refused before anything is stored:
   * a header can carry a secret under any name. Headers that are per
   * attempt or secret come from the client's `headers` callback instead.
   * Credential names (`Authorization`, `Cookie`, ...) cannot be listed.
   * @default []
   * @example { storeHeaders: ['Prefer', 'X-Tenant'] }
   */
  storeHeaders?: string[];
  /**
   * Query parameter names that look like credentials (`token`, `api_key`,
   * `signature`, `*_token`, ...) but may be stored for this endpoint. A URL
   * carrying any other such name is refused before anything is stored: the
   * URL is kept with the operation and resent as it is. Names are compared
   * decoded, ignoring case, brackets and separators (`accessKey` is
   * `access_key`, `token[]` is `token`).
   * @default []
   * @example { storeQuery: ['page_token'] }
   */
  storeQuery?: string[];
  /**
   * Largest response body read, in bytes. The body is read incrementally
   * and reading stops past this, so a huge or endless answer cannot fill the
   * memory. A 2xx over it still means the effect happened (`succeeded`),
   * but its body is not kept: `data` is `undefined` and the `attempt:ended`
   * detail says why.
   * @default 1_048_576 (1 MiB)
   * @example { maxResponseBytes: 8 * 1_048_576 }
   */
  maxResponseBytes?: number;
  /**
   * Write requests ahead to the store even when they send no idempotency
   * key (`GET`, `HEAD`, `OPTIONS`, or `sendKey: false`). Without it such a
   * request lives in memory only while it runs (still joined by a second
   * `send` of its key): without a key a resend after a crash gains nothing,
   * and reads would fill the store. Requests that send a key are always
   * written ahead. A request's own `persist` overrides it.
   * @default false
   * @example { endpoints: { 'GET /exports/*': { persist: true } } }
   */
  persist?: boolean;
}

export interface RequestPolicy {
  /** Lower case. */
  storeHeaders: readonly string[];
  /** Lower case. */
  storeQuery: readonly string[];
  maxResponseBytes: number;
  persist: boolean;
}

/** 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1_048_576;

/** The checks of `RequestPolicyOptions`' fields, for the policy's checks. */
export const requestPolicyChecks = {
  storeHeaders: list(str({ pattern: HEADER_NAME, mustBe: 'must be a header name' })),
  storeQuery: list(str({ nonEmpty: true })),
  maxResponseBytes: num({ int: true, min: 1, max: 2 ** 31 - 1 }),
  persist: bool,
};

/** What the schema cannot say: credentials are never stored, whatever a policy lists. */
export function checkRequestPolicy(options: RequestPolicyOptions, prefix: string): void {
  for (const name of options.storeHeaders ?? []) {
    if (CREDENTIAL_HEADERS.includes(name.toLowerCase())) {
      throw new InvalidOptionsError(`${prefix}.storeHeaders`, `${name} carries credentials, which are never stored`);
    }
  }
}

/** A name for the client option `resultHeaders`: a stored answer is at rest like a request, so credentials are refused alike. */
export const resultHeaderName: Check = (v, path) => {
  str()(v, path);
  if (CREDENTIAL_HEADERS.includes((v as string).toLowerCase()))
    fail(path, `${v} carries credentials, which are never stored`);
};

/** Endpoint over default over built-in; the key header is never a stored header (it comes from `key`). */
export function resolveRequestPolicy(
  name: string,
  pick: <K extends keyof RequestPolicyOptions>(key: K) => RequestPolicyOptions[K],
  profile: ProviderProfile,
): RequestPolicy {
  const storeHeaders = (pick('storeHeaders') ?? []).map((h) => h.toLowerCase());
  if (storeHeaders.includes(profile.keyHeader.toLowerCase())) {
    const field = name === 'default' ? 'policy' : `endpoints["${name}"]`;
    throw new InvalidOptionsError(
      `${field}.storeHeaders`,
      `${profile.keyHeader} is the key header; pass keys as \`key\``,
    );
  }
  return {
    storeHeaders,
    storeQuery: (pick('storeQuery') ?? []).map((q) => q.toLowerCase()),
    maxResponseBytes: pick('maxResponseBytes') ?? DEFAULT_MAX_RESPONSE_BYTES,
    persist: pick('persist') ?? false,
  };
}
