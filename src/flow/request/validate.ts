/**
 * Checks a request completely before it is written ahead. Anything `fetch`
 * would refuse locally (a forbidden method, a body on a GET, a blocked port,
 * a header that is no header) fails here with `InvalidRequestError` naming
 * the field: written ahead, it would become attempts that "may have been
 * sent" and an operation stuck in `unknown` with nothing at the server.
 * Also where secrets are kept out of the store: stored headers are an
 * allow-list. The checks of a URL's port and query (a blocked port,
 * credential-like parameters) and of `meta` (plain JSON) are in
 * optional-parts.ts, loaded only for a request that has one.
 */
import { HEADER_NAME } from '../../model.js';
import { refuse as fail } from './request-problem.js';

/** Characters a field value may not hold (CR, LF, NUL and other controls; above U+00FF is no ByteString). */
const BAD_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** Methods `fetch` refuses to send (Fetch standard, "forbidden method"). */
const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];

/** The method is one `fetch` sends, and a GET or HEAD carries no body. */
export function checkMethod(method: string, hasBody: boolean): void {
  if (FORBIDDEN_METHODS.includes(method)) fail('method', 'verb', method);
  if (hasBody && (method === 'GET' || method === 'HEAD')) fail('body', 'readBody', method);
}

/**
 * http(s) only and no `user:password@` (credentials are never stored). A
 * URL that names a port or carries a query is checked further
 * (optional-parts.ts, loaded for it by `prepareOperation`).
 */
export function checkUrl(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail('url', 'scheme', url.protocol);
  }
  if (url.username !== '' || url.password !== '') {
    fail('url', 'userinfo');
  }
}

/** Why `fetch` would refuse this header (not a token name, a value with CR, LF or other controls), if it would. */
export function headerProblem(name: string, value: unknown): string | undefined {
  if (!HEADER_NAME.test(name)) return 'is not a valid header name';
  if (typeof value !== 'string') return 'must be a string';
  if (BAD_HEADER_VALUE.test(value)) return 'holds characters a header value cannot (CR, LF, NUL, …)';
  return undefined;
}

/**
 * `undefined`, or an AbortSignal, recognised by its shape (`aborted` and
 * `addEventListener`), not by `instanceof`: a signal from another realm (an
 * iframe, a worker's) or a polyfill is one too. Anything else would fail at
 * the first attempt, after the write-ahead, and leave an operation that
 * "may have been sent" with nothing at the server.
 */
export function checkSignal(signal: unknown): void {
  if (signal === undefined || isSignal(signal)) return;
  fail('signal', isSignal((signal as AbortController | null)?.signal) ? 'controller' : 'signal');
}

const isSignal = (value: unknown): boolean =>
  typeof (value as AbortSignal | null)?.aborted === 'boolean' &&
  typeof (value as AbortSignal).addEventListener === 'function';

/**
 * `undefined`, or a Standard Schema (standardschema.dev): anything whose
 * `~standard.validate` is a function (arktype's types are callable). It runs
 * only once the server has answered 2xx: a schema that cannot run then would
 * fail a payment that succeeded.
 */
export function checkResponseSchema(schema: unknown): void {
  const standard = (schema as { '~standard'?: { validate?: unknown } } | null | undefined)?.['~standard'];
  if (schema === undefined || typeof standard?.validate === 'function') return;
  fail('responseSchema', 'schema');
}
