/**
 * The checks a request URL needs only when it names a port or carries a
 * query: a port `fetch` blocks, and query parameters that look like
 * credentials (which are never stored). Loaded with `import()` by
 * `prepareOperation` only for such a URL: a page whose API is reached at its
 * scheme's default port, with the request in the body, never downloads the
 * Fetch standard's port list. It imports nothing, so it shares no chunk with
 * the client; the caller turns a problem into the refusal.
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

/** What refuses the URL: the field, the text that says why, its detail. */
export type UrlProblem = readonly [field: string, text: RequestTextId, detail?: string];

/**
 * The first problem of `url`'s port and query, if it has one: a blocked
 * port, or a query parameter that looks like a credential unless the
 * endpoint's `storeQuery` names it.
 */
export function urlProblem(url: URL, storeQuery: readonly string[]): UrlProblem | undefined {
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
