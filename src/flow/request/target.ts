/**
 * Where a request goes, and which endpoint rule it falls under. `baseUrl`
 * is joined, as ky's `prefixUrl` is, not URL-resolved: with
 * `'https://api.example.com/v1/'`, `'/payments'` goes to `…/v1/payments`
 * (URL resolution would drop `/v1`). Endpoint rules are written the way
 * requests are: `'POST /payments'` matches that request, because rules see
 * the path relative to the base.
 */
import { InvalidRequestError } from '../../errors.js';

/** A URL that names its scheme (`https:`, `http:`, or any other, refused later): used as it is. */
const ABSOLUTE = /^[a-z][a-z\d+.-]*:/i;

/**
 * The request URL: an absolute URL (or a `URL` object) as it is; anything
 * else joined to `baseUrl` with exactly one `/` between them.
 *
 * @example resolveUrl('/payments', 'https://api.example.com/v1/').href // 'https://api.example.com/v1/payments'
 */
export function resolveUrl(url: string | URL, baseUrl: string | undefined): URL {
  if (typeof url !== 'string' && !(url instanceof URL)) {
    throw new InvalidRequestError('url', 'must be a string or a URL');
  }
  const text = url instanceof URL ? url.href : url;
  const joined = baseUrl === undefined || url instanceof URL || ABSOLUTE.test(text) ? text : joinPath(baseUrl, text);
  try {
    return new URL(joined);
  } catch {
    throw new InvalidRequestError(
      'url',
      `"${text}" is not a valid URL${baseUrl === undefined ? ' (no baseUrl is set: give an absolute URL or set baseUrl)' : ''}`,
    );
  }
}

function joinPath(baseUrl: string, path: string): string {
  if (path === '') return baseUrl;
  if (path.startsWith('?') || path.startsWith('#')) return `${baseUrl}${path}`;
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * The path endpoint rules see: relative to the base (`/payments` for
 * `…/v1/payments` under `…/v1/`), or the URL's whole path for a URL outside
 * the base (another host, another prefix) or when there is no base.
 */
export function pathWithinBase(url: URL, base: URL | undefined): string {
  if (base === undefined || url.origin !== base.origin) return url.pathname;
  const prefix = base.pathname.replace(/\/+$/, '');
  if (prefix === '') return url.pathname;
  if (url.pathname === prefix) return '/';
  return url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname;
}

/** `baseUrl` parsed once (it was validated as a URL with the client's options). */
export function parseBase(baseUrl: string | undefined): URL | undefined {
  return baseUrl === undefined ? undefined : new URL(baseUrl);
}
