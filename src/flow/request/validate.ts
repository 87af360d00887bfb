/**
 * Checks a request completely before it is written ahead. Anything `fetch`
 * would refuse locally (a forbidden method, a body on a GET, a blocked port,
 * a header that is no header) fails here with `InvalidRequestError` naming
 * the field: written ahead, it would become attempts that "may have been
 * sent" and an operation stuck in `unknown` with nothing at the server.
 * Also where secrets are kept out of the store: stored headers are an
 * allow-list and `meta` must be plain JSON. The checks of a URL's port and
 * query (a blocked port, credential-like parameters) are in url-checks.ts,
 * loaded only for a URL that has one.
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
 * (url-checks.ts, loaded for it by `prepareOperation`).
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

/** Nesting allowed in `meta`: deeper is a mistake (or a cycle in disguise), not metadata. */
const MAX_META_DEPTH = 32;

/**
 * A deep copy of `meta` as plain JSON (null, booleans, finite numbers,
 * strings, arrays, plain objects; `undefined` properties are left out, as
 * JSON does). Anything else (a function, a cycle, a Date, a class instance,
 * more than 32 levels) is refused: every store must read back what was written.
 */
export function plainMeta(meta: unknown): Record<string, unknown> {
  if (!isPlainObject(meta)) fail('meta', 'meta');
  return copy(meta, 'meta', 1, []) as Record<string, unknown>;
}

function copy(value: unknown, field: string, depth: number, ancestors: object[]): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : fail(field, 'finite');
  if (typeof value !== 'object') return fail(field, 'json', typeof value);
  if (depth > MAX_META_DEPTH) fail(field, 'deep', MAX_META_DEPTH);
  if (ancestors.includes(value)) fail(field, 'cycle');
  const inside = [...ancestors, value];
  if (Array.isArray(value)) {
    return Array.from(value, (item, i) => copy(item, `${field}.${i}`, depth + 1, inside));
  }
  if (!isPlainObject(value)) return fail(field, 'plain');
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    if (name === '__proto__') fail(`${field}.${name}`, 'name');
    if (item !== undefined) out[name] = copy(item, `${field}.${name}`, depth + 1, inside);
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
