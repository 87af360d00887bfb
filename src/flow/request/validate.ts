/**
 * Checks a request completely before it is written ahead. Anything `fetch`
 * would refuse locally (a forbidden method, a body on a GET, a blocked port,
 * a header that is no header) fails here with `InvalidRequestError` naming
 * the field: written ahead, it would become attempts that "may have been
 * sent" and an operation stuck in `unknown` with nothing at the server.
 * Also where secrets are kept out of the store: stored headers are an
 * allow-list, credential-like query parameters are refused, and `meta` must
 * be plain JSON.
 */
import { HEADER_NAME } from '../../model.js';
import { refuse as fail } from './request-problem.js';

/** Characters a field value may not hold (CR, LF, NUL and other controls; above U+00FF is no ByteString). */
const BAD_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** Methods `fetch` refuses to send (Fetch standard, "forbidden method"). */
const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];

/** Ports `fetch` blocks (Fetch standard, "bad port"): a request to one never leaves this machine. */
const BAD_PORTS = new Set(
  '0 1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531 532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080'.split(
    ' ',
  ),
);

/** Query parameter names (as `queryName` flattens them) that carry credentials. */
const CREDENTIAL_QUERY = new Set(
  'key apikey auth authorization sig signature secret secrets password passwd pwd passcode credential credentials session sessionid sid jwt bearer hmac otp token tokens'.split(
    ' ',
  ),
);
/** ...and endings that do: `access_token`, `client_secret`, `X-Amz-Signature`, `accessKey`, `private_key`. */
const CREDENTIAL_QUERY_END =
  /(token|secret|password|passcode|signature|apikey|accesskey|privatekey|credentials?|hmac)$/;

/**
 * A query name as a server may read it: NFKC, lower case, and only letters
 * and digits, so `token[]`, `token%00`, `"token "`, `Access-Key` and
 * `accessKey` are all seen (names arrive percent-decoded from `URLSearchParams`).
 */
const queryName = (name: string): string =>
  name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

/** The method is one `fetch` sends, and a GET or HEAD carries no body. */
export function checkMethod(method: string, hasBody: boolean): void {
  if (FORBIDDEN_METHODS.includes(method)) fail('method', 'verb', method);
  if (hasBody && (method === 'GET' || method === 'HEAD')) fail('body', 'readBody', method);
}

/**
 * http(s) only, no blocked port, no `user:password@` (credentials are never
 * stored), and no query parameter that looks like a credential unless the
 * endpoint's `storeQuery` names it.
 */
export function checkUrl(url: URL, storeQuery: readonly string[]): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail('url', 'scheme', url.protocol);
  }
  if (url.username !== '' || url.password !== '') {
    fail('url', 'userinfo');
  }
  if (BAD_PORTS.has(url.port)) fail('url', 'port', url.port);
  for (const name of new Set(url.searchParams.keys())) {
    const flat = queryName(name);
    if (
      (CREDENTIAL_QUERY.has(flat) || CREDENTIAL_QUERY_END.test(flat)) &&
      !storeQuery.some((allowed) => queryName(allowed) === flat)
    ) {
      fail(`url.query.${name}`, 'query');
    }
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
