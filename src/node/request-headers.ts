/**
 * The headers a request sent with node:http carries: the caller's, plus
 * what Node's own `fetch` (undici) adds when the caller did not set it, so
 * that a server sees the same request whichever transport sent it (content
 * negotiation, a firewall that wants a user agent, a body without a type).
 */

/**
 * Added by Node's `fetch` to every request that does not set them (Node 20,
 * 22 and 24 send these values). `accept-encoding` is what undici asks for:
 * a server that compresses answers the same way to both transports, and the
 * answer is decoded as undici decodes it (content-decoding.ts).
 */
const FETCH_DEFAULT_HEADERS: readonly (readonly [string, string])[] = [
  ['accept', '*/*'],
  ['accept-language', '*'],
  ['sec-fetch-mode', 'cors'],
  ['user-agent', 'node'],
  ['accept-encoding', 'gzip, deflate'],
];

/** The type `fetch` gives a string body that has none (Fetch standard, "extract a body"). */
const TEXT_BODY_TYPE = 'text/plain;charset=UTF-8';

/**
 * `headers` with fetch's defaults added where the caller set none (names
 * compared in any case), and the body's exact `content-length` (a caller's
 * own is replaced: the length of what is sent is not the caller's to say, and
 * a fixed length means no chunked upload, as fetch sends a known body).
 *
 * @param bodyBytes the body's length in bytes; `undefined` when there is no
 *   body (node:http then says `content-length: 0` for the methods fetch does).
 * @param textBody the body is a string (it gets fetch's text type unless typed).
 */
export function wireHeaders(
  headers: Record<string, string>,
  bodyBytes: number | undefined,
  textBody: boolean,
): Record<string, string> {
  const wire: Record<string, string> = {};
  const present = new Set<string>();
  for (const name in headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-length') continue;
    present.add(lower);
    wire[name] = headers[name] as string;
  }
  for (const [name, value] of FETCH_DEFAULT_HEADERS) {
    if (!present.has(name)) wire[name] = value;
  }
  if (textBody && !present.has('content-type')) wire['content-type'] = TEXT_BODY_TYPE;
  if (bodyBytes !== undefined) wire['content-length'] = String(bodyBytes);
  return wire;
}
