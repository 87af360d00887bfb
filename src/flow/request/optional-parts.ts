/**
 * The checks of parts a plain request does not have: a URL's port (one
 * `fetch` blocks) and query (parameters that look like credentials are never
 * stored), and `meta` (copied as plain JSON). Loaded with `import()` by
 * `prepareOperation` only for a request that has one: a page whose API is
 * reached at its scheme's default port, with the request in the body and no
 * `meta`, never downloads the Fetch standard's port list. It imports only
 * types, so it shares no chunk with the client; the caller turns a problem
 * into the refusal.
 */
import type { RequestTextId } from './request-texts.js';

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

/** What refuses a part: the field, the text that says why, its detail. */
export type PartProblem = readonly [field: string, text: RequestTextId, detail?: string | undefined];

/**
 * The first problem of `url`'s port and query, if it has one: a blocked
 * port, or a query parameter that looks like a credential unless the
 * endpoint's `storeQuery` names it.
 */
export function urlProblem(url: URL, storeQuery: readonly string[]): PartProblem | undefined {
  if (BAD_PORTS.has(url.port)) return ['url', 'port', url.port];
  for (const name of new Set(url.searchParams.keys())) {
    const flat = queryName(name);
    if (
      (CREDENTIAL_QUERY.has(flat) || CREDENTIAL_QUERY_END.test(flat)) &&
      !storeQuery.some((allowed) => queryName(allowed) === flat)
    ) {
      return [`url.query.${name}`, 'query'];
    }
  }
  return undefined;
}

/** Nesting allowed in `meta`: deeper is a mistake (or a cycle in disguise), not metadata. */
const MAX_META_DEPTH = 32;

/** A refused part of `meta`, thrown out of the copy's recursion and returned by `plainMeta`. */
class Refused {
  constructor(readonly problem: PartProblem) {}
}

const fail = (field: string, text: RequestTextId, detail?: string | number): never => {
  throw new Refused([field, text, detail === undefined ? undefined : String(detail)]);
};

/**
 * A deep copy of `meta` as plain JSON (null, booleans, finite numbers,
 * strings, arrays, plain objects; `undefined` properties are left out, as
 * JSON does), or the problem that refuses it. Anything else (a function, a
 * cycle, a Date, a class instance, more than 32 levels) is refused: every
 * store must read back what was written.
 */
export function plainMeta(meta: unknown): { meta: Record<string, unknown> } | { problem: PartProblem } {
  try {
    if (!isPlainObject(meta)) fail('meta', 'meta');
    return { meta: copy(meta, 'meta', 1, []) as Record<string, unknown> };
  } catch (error) {
    if (error instanceof Refused) return { problem: error.problem };
    throw error;
  }
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
