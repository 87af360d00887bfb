/**
 * The answers the middleware itself gives, as RFC 9457 problem+json. Each
 * problem type is a stable URN a client can match on (oncely's `ietf` and
 * `stripe` profiles match `outcome-unknown`), and every one of them carries
 * `Access-Control-Expose-Headers`, so page code can read `Retry-After`.
 */

import { OUTCOME_UNKNOWN_PROBLEM_TYPE } from '../policy/profiles.js';
import type { Answer } from './replay.js';

export const PROBLEM_TYPES = {
  keyMissing: 'urn:oncely:idempotency:key-missing',
  keyInvalid: 'urn:oncely:idempotency:key-invalid',
  keyReused: 'urn:oncely:idempotency:key-reused',
  inProgress: 'urn:oncely:idempotency:in-progress',
  outcomeUnknown: OUTCOME_UNKNOWN_PROBLEM_TYPE,
  handlerFailed: 'urn:oncely:idempotency:handler-failed',
} as const;

/** Headers a browser must be allowed to read on our answers and replays. */
export const EXPOSED = ['Idempotent-Replayed', 'Retry-After'];

export function exposeHeaders(headers: Headers): void {
  const present = (headers.get('access-control-expose-headers') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  const lower = new Set(present.map((h) => h.toLowerCase()));
  if (lower.has('*')) return;
  const added = EXPOSED.filter((h) => !lower.has(h.toLowerCase()));
  if (added.length > 0) headers.set('Access-Control-Expose-Headers', [...present, ...added].join(', '));
}

export function problem(
  status: number,
  type: string,
  title: string,
  detail: string,
  extra: Record<string, string> = {},
): Answer {
  const headers = new Headers({ 'Content-Type': 'application/problem+json', ...extra });
  exposeHeaders(headers);
  return { status, headers, body: new TextEncoder().encode(JSON.stringify({ type, title, status, detail })) };
}

export const problems = {
  keyMissing: (header: string) =>
    problem(400, PROBLEM_TYPES.keyMissing, `${header} is missing`, `This operation requires an ${header} header.`),
  keyInvalid: (header: string, reason: string) =>
    problem(400, PROBLEM_TYPES.keyInvalid, `${header} is invalid`, `${reason}.`),
  keyReused: (header: string) =>
    problem(
      422,
      PROBLEM_TYPES.keyReused,
      `${header} was already used with a different request (idempotency key reuse)`,
      'An idempotency key names one operation: send this request under a new key.',
    ),
  inProgress: (header: string, retryAfterMs: number) =>
    problem(
      409,
      PROBLEM_TYPES.inProgress,
      `A request with this ${header} is still in progress`,
      'Retry after the original request has completed; it will be replayed.',
      { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    ),
  /**
   * 409, not 500: the request conflicts with the state of its key (a claim
   * that ended without an outcome), and no retry can change that, so there
   * is no `Retry-After`. A client that does not know the type reads a 409
   * as "in progress" and keeps the key until its deadline, ending "unknown":
   * the same answer, later.
   */
  outcomeUnknown: (header: string) =>
    problem(
      409,
      PROBLEM_TYPES.outcomeUnknown,
      `The outcome of the request with this ${header} is unknown: it may have taken effect`,
      'The server stopped while running this request and stored no outcome. It is not run again: reconcile first.',
    ),
  /** `released`: the key was let go (its effect rolled back, or the route re-runs safely), so a retry runs it. */
  handlerFailed: (released: boolean) =>
    problem(
      500,
      PROBLEM_TYPES.handlerFailed,
      'The request failed while it ran',
      released
        ? 'The handler failed; its key was released, so a retry with it runs the request again.'
        : 'The handler failed; the request may have taken effect. Its key now answers "outcome unknown".',
    ),
};
