/**
 * Reading a refusal the way the provider wrote it: the final non-2xx answer
 * as an `ErrorResponse` (parsed body, RFC 9457 problem details) and the
 * provider's own code on top (`providerErrorOf`, through the profile). Pure
 * functions of the stored answer: the same record read by any process gives
 * the same error, so they work on what the store keeps, not on a live Response.
 */
import type { ErrorResponse, ProblemDetails, ProviderError } from '../errors.js';
import type { StoredBody } from '../model.js';
import type { ProviderProfile } from './profiles.js';

/** What a provider's `errorOf` returns: the error without the profile name, which is added. */
export type ProviderErrorFields = Omit<ProviderError, 'profile'>;

/** A stored or received answer: status, kept headers (lower-case names) and body. */
export interface AnswerLike {
  status: number;
  headers: Readonly<Record<string, string>>;
  body?: StoredBody | undefined;
  /** The body was cut at `maxResponseBytes`. */
  truncated?: boolean | undefined;
}

const PROBLEM_TYPE = /^application\/problem\+json\b/i;

/** The body as the caller reads it: JSON parsed, text as text, binary left out. */
export function bodyOf(body: StoredBody | undefined): unknown {
  if (body === undefined || body.encoding === 'base64') return undefined;
  if (body.encoding === 'text') return body.text;
  try {
    return JSON.parse(body.text) as unknown;
  } catch {
    // Stored as JSON only after it parsed; a hand-edited record stays readable as text.
    return body.text;
  }
}

/** The final non-2xx answer as `OperationError.response`. */
export function errorResponseOf(answer: AnswerLike): ErrorResponse {
  const body = bodyOf(answer.body);
  const contentType = answer.headers['content-type'] ?? '';
  const problem = PROBLEM_TYPE.test(contentType.trim()) ? problemDetailsOf(body) : undefined;
  return {
    status: answer.status,
    headers: { ...answer.headers },
    body,
    ...(problem === undefined ? {} : { problem }),
    ...(answer.truncated === true ? { truncated: true } : {}),
  };
}

/**
 * RFC 9457 members of a parsed problem+json body. A member of the wrong type
 * is ignored (RFC 9457 §3.1), and a missing `type` means `about:blank`.
 */
export function problemDetailsOf(body: unknown): ProblemDetails | undefined {
  if (!isObject(body)) return undefined;
  const problem: ProblemDetails = { type: stringAt(body, 'type') ?? 'about:blank' };
  const title = stringAt(body, 'title');
  const detail = stringAt(body, 'detail');
  const instance = stringAt(body, 'instance');
  const status = body.status;
  if (title !== undefined) problem.title = title;
  if (typeof status === 'number' && Number.isInteger(status)) problem.status = status;
  if (detail !== undefined) problem.detail = detail;
  if (instance !== undefined) problem.instance = instance;
  return problem;
}

/**
 * Stripe's error object: `{"error": {"type", "code", "decline_code", "message", "param"}}`.
 * Undefined when the body is not one (a proxy's HTML page, an empty body).
 */
export function stripeErrorOf(body: unknown): ProviderErrorFields | undefined {
  const error = isObject(body) ? body.error : undefined;
  if (!isObject(error)) return undefined;
  const fields: ProviderErrorFields = {
    type: stringAt(error, 'type'),
    code: stringAt(error, 'code'),
    declineCode: stringAt(error, 'decline_code'),
    message: stringAt(error, 'message'),
    param: stringAt(error, 'param'),
  };
  return withoutEmpty(fields);
}

/** Problem details as a provider error: `type` URI as the code, `title` as the category, `detail` as the text. */
export function problemErrorOf(problem: ProblemDetails | undefined): ProviderErrorFields | undefined {
  if (problem === undefined) return undefined;
  return withoutEmpty({ code: problem.type, type: problem.title, message: problem.detail ?? problem.title });
}

/**
 * The provider's reading of `response`, through the profile: its `errorOf`
 * hook when it has one, else its `errorFormat`, else problem details when the
 * server sent them. A hook that throws is ignored: a broken reader must not
 * hide the operation's real error.
 */
export function providerErrorOf(profile: ProviderProfile, response: ErrorResponse): ProviderError | undefined {
  let fields: ProviderErrorFields | undefined;
  if (typeof profile.errorOf === 'function') {
    try {
      fields = profile.errorOf(response.body, response.status, response.headers);
    } catch {
      fields = undefined;
    }
  }
  if (fields === undefined) {
    fields = profile.errorFormat === 'stripe' ? stripeErrorOf(response.body) : problemErrorOf(response.problem);
  }
  return fields === undefined ? undefined : { profile: profile.name, ...fields };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringAt(object: Record<string, unknown>, name: string): string | undefined {
  const value = object[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Drops undefined members; undefined when nothing is left. */
function withoutEmpty(fields: ProviderErrorFields): ProviderErrorFields | undefined {
  const kept = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as ProviderErrorFields;
  return Object.keys(kept).length === 0 ? undefined : kept;
}
