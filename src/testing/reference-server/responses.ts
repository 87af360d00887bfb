import { STATUS_CODES } from 'node:http';

/** A fully decided answer: what gets written to the wire (and stored for replay). */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  /** Serialized once so a replay is byte-for-byte the original. */
  body: string;
}

export type Profile = 'ietf' | 'stripe';

/** The rejections the idempotency layer itself produces. */
export type Rejection = 'in_progress' | 'mismatch' | 'missing_key' | 'unauthorized' | 'internal';

const PROBLEM_TYPE_BASE = 'https://example.com/errors/';

/**
 * Headers a browser client must be allowed to read to classify a failure;
 * without this list `fetch` in a page hides them even on a 2xx.
 */
export const EXPOSED_HEADERS =
  'Retry-After, Idempotent-Replayed, RateLimit, RateLimit-Reset, RateLimit-Policy, Stripe-Should-Retry';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): WireResponse {
  const text = body === undefined ? '' : JSON.stringify(body);
  const withType: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json' };
  return { status, headers: { ...withType, ...headers }, body: text };
}

function problem(status: number, slug: string, title: string, detail: string): WireResponse {
  const body = { type: `${PROBLEM_TYPE_BASE}${slug}`, title, status, detail };
  return jsonResponse(status, body, { 'Content-Type': 'application/problem+json' });
}

function stripeError(status: number, error: Record<string, string>): WireResponse {
  return jsonResponse(status, { error });
}

/** draft-ietf-httpapi-idempotency-key-header §2.7 error shapes, as problem+json (RFC 9457). */
function ietfRejection(reason: Rejection): WireResponse {
  switch (reason) {
    case 'in_progress':
      return problem(
        409,
        'idempotency-in-progress',
        'A request with this Idempotency-Key is still in progress',
        'Retry after the original request has completed.',
      );
    case 'mismatch':
      return problem(
        422,
        'idempotency-key-reused',
        'Idempotency-Key was already used with a different payload',
        'An Idempotency-Key must not be reused across different payloads of this operation.',
      );
    case 'missing_key':
      return problem(
        400,
        'idempotency-key-missing',
        'Idempotency-Key is missing',
        'This operation is idempotent and requires an Idempotency-Key header.',
      );
    case 'unauthorized':
      return withHeader(
        problem(401, 'unauthorized', 'Unauthorized', 'Missing or invalid credentials.'),
        'WWW-Authenticate',
        'Bearer',
      );
    case 'internal':
      return problem(500, 'internal', 'Internal Server Error', 'The handler failed; the key was released.');
  }
}

/** Stripe's documented error envelope for the same situations. */
function stripeRejection(reason: Rejection): WireResponse {
  switch (reason) {
    case 'in_progress':
      return stripeError(409, {
        type: 'idempotency_error',
        code: 'idempotency_key_in_use',
        message: 'There is currently another in-progress request using this Idempotent Key. Please try again later.',
      });
    case 'mismatch':
      return stripeError(400, {
        type: 'idempotency_error',
        message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.',
      });
    case 'missing_key':
      return stripeError(400, {
        type: 'invalid_request_error',
        message: 'This request requires an Idempotency-Key header.',
      });
    case 'unauthorized':
      return withHeader(
        stripeError(401, { type: 'invalid_request_error', message: 'Invalid API Key provided.' }),
        'WWW-Authenticate',
        'Bearer',
      );
    case 'internal':
      return stripeError(500, { type: 'api_error', message: 'The handler failed; the key was released.' });
  }
}

export function rejection(profile: Profile, reason: Rejection): WireResponse {
  return profile === 'stripe' ? stripeRejection(reason) : ietfRejection(reason);
}

/** Default body for an injected status or outage that did not script its own. */
export function injectedResponse(profile: Profile, status: number, body: unknown): WireResponse {
  if (body !== undefined) return jsonResponse(status, body);
  const title = STATUS_CODES[status] ?? 'Injected failure';
  if (profile === 'stripe') return stripeError(status, { type: 'api_error', message: title });
  return problem(status, 'injected', title, 'Injected by the reference server.');
}

/**
 * Numbers are delta-seconds (rounded up, since the header only allows
 * integers and waiting less than asked would violate it), dates become an
 * IMF-fixdate, strings pass verbatim so tests can send malformed values.
 */
export function formatRetryAfter(value: number | Date | string): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toUTCString();
  return String(Math.max(0, Math.ceil(value)));
}

export function withHeader(response: WireResponse, name: string, value: string): WireResponse {
  return { ...response, headers: { ...response.headers, [name]: value } };
}

export function withRetryAfter(response: WireResponse, retryAfter: number | Date | string | undefined): WireResponse {
  if (retryAfter === undefined) return response;
  return withHeader(response, 'Retry-After', formatRetryAfter(retryAfter));
}

/** Echoing the Origin (rather than `*`) keeps credentialed browser requests working. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) {
    return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS };
  }
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    Vary: 'Origin',
  };
}

export function preflightResponse(
  origin: string | undefined,
  requestedHeaders: string | undefined,
  keyHeader: string,
): WireResponse {
  const allowHeaders = requestedHeaders ?? `Content-Type, Authorization, ${keyHeader}`;
  return {
    status: 204,
    headers: {
      ...corsHeaders(origin),
      'Access-Control-Allow-Methods': ALLOWED_METHODS,
      'Access-Control-Allow-Headers': allowHeaders,
      'Access-Control-Max-Age': '600',
    },
    body: '',
  };
}
