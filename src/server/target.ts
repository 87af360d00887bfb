/**
 * Path and query of a request target, read without the URL parser when the
 * parser would give them back unchanged (the common case on every guarded
 * request); anything else through the parser.
 */

/**
 * A path the URL parser would give back unchanged: no dot segment, no
 * percent sign, no backslash, no second leading slash, nothing it would
 * encode; its query plain too (not empty: the parser drops a lone `?`), and
 * no fragment.
 */
const PLAIN_TARGET = /^\/(?!\/)[\w\-~!$&'()*+,;=:@/]*(\?[\w\-.~!$&()*+,;=:@/?%]+)?$/;

export interface PathAndQuery {
  pathname: string;
  search: string;
}

/** `target` split at its `?`, when it is plain (see `PLAIN_TARGET`); else `undefined`. */
function plainParts(target: string): PathAndQuery | undefined {
  if (!PLAIN_TARGET.test(target)) return undefined;
  const question = target.indexOf('?');
  return question < 0
    ? { pathname: target, search: '' }
    : { pathname: target.slice(0, question), search: target.slice(question) };
}

/** Path and query of a Node request's target (`req.url`) as `new URL` gives them. */
export function targetParts(target: string): PathAndQuery {
  const plain = plainParts(target);
  if (plain !== undefined) return plain;
  const url = new URL(target, 'http://localhost');
  return { pathname: url.pathname, search: url.search };
}

/**
 * Path and query of a Fetch `Request`'s URL as `new URL` gives them. The URL
 * is serialised already (an `http:` or `https:` one's path starts at the
 * first slash after `//`), so a plain path is read off it as it is.
 */
export function urlParts(url: string): PathAndQuery {
  const authority = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1;
  const slash = authority < 0 ? -1 : url.indexOf('/', authority);
  const plain = slash < 0 ? undefined : plainParts(url.slice(slash));
  if (plain !== undefined) return plain;
  const parsed = new URL(url);
  return { pathname: parsed.pathname, search: parsed.search };
}
