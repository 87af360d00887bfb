/**
 * Server hints about when to come back: `Retry-After` (delta-seconds or any
 * of the three HTTP-date forms of RFC 9110 §5.6.7) and the IETF RateLimit
 * headers (`RateLimit-Reset`, and `RateLimit` in both its older
 * `limit=, remaining=, reset=` and newer `"policy";r=;t=` forms).
 *
 * Pure: the caller passes `nowMs`. Parsed by hand rather than `Date.parse`,
 * whose handling of RFC 850 and asctime dates differs between engines (and
 * reads asctime as local time).
 */

/** Reads a header by name; `Headers#get` and plain records both fit. */
export type HeaderLookup = (name: string) => string | null | undefined;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * Milliseconds until the server allows the next attempt, or `undefined` when
 * it gave no usable hint. Never negative: a date in the past means "now" (0).
 *
 * @internal
 */
export function parseServerHintMs(get: HeaderLookup, nowMs: number): number | undefined {
  const retryAfter = get('retry-after');
  if (retryAfter != null) {
    const ms = parseRetryAfterMs(retryAfter, nowMs);
    if (ms !== undefined) return ms;
  }
  const reset = get('ratelimit-reset');
  if (reset != null) {
    const seconds = parseDeltaSeconds(reset);
    if (seconds !== undefined) return seconds * 1000;
  }
  const rateLimit = get('ratelimit');
  if (rateLimit != null) return parseRateLimitFieldMs(rateLimit);
  return undefined;
}

/** `Retry-After: 120` or `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT` (or RFC 850 / asctime). @internal */
export function parseRetryAfterMs(value: string, nowMs: number): number | undefined {
  const seconds = parseDeltaSeconds(value);
  if (seconds !== undefined) return seconds * 1000;
  const at = parseHttpDate(value);
  if (at === undefined) return undefined;
  return Math.max(0, at - nowMs);
}

function parseDeltaSeconds(value: string): number | undefined {
  const trimmed = value.trim();
  if (!/^\d+$/.test(trimmed)) return undefined;
  const seconds = Number(trimmed);
  return Number.isSafeInteger(seconds) ? seconds : undefined;
}

/** Parses IMF-fixdate, RFC 850 and asctime dates to epoch ms, all as GMT. @internal */
export function parseHttpDate(value: string): number | undefined {
  const text = value.trim();
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  let m = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(text);
  if (m) return utc(m[3], m[2], m[1], m[4], m[5], m[6]);
  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  m = /^[A-Za-z]+, (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/.exec(text);
  if (m) return utc(expandTwoDigitYear(Number(m[3])), m[2], m[1], m[4], m[5], m[6]);
  // asctime: Sun Nov  6 08:49:37 1994
  m = /^[A-Za-z]{3} ([A-Za-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/.exec(text);
  if (m) return utc(m[6], m[1], m[2], m[3], m[4], m[5]);
  return undefined;
}

/**
 * RFC 9110: a two-digit year that appears more than 50 years in the future is
 * the most recent past year with those digits. Relative to the current year
 * of the date's reader is not available purely, so use the 1970 pivot of the
 * HTTP ecosystem: 70–99 → 19xx, 00–69 → 20xx.
 */
function expandTwoDigitYear(yy: number): number {
  return yy >= 70 ? 1900 + yy : 2000 + yy;
}

function utc(
  year: string | number | undefined,
  month: string | undefined,
  day: string | undefined,
  hh: string | undefined,
  mm: string | undefined,
  ss: string | undefined,
): number | undefined {
  const monthIndex = MONTHS.indexOf((month ?? '').toLowerCase());
  if (monthIndex < 0) return undefined;
  const ms = Date.UTC(Number(year), monthIndex, Number(day), Number(hh), Number(mm), Number(ss));
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * `RateLimit: limit=100, remaining=0, reset=5` (older drafts) or
 * `RateLimit: "default";r=0;t=5` (newer drafts). Only a policy that is
 * exhausted (remaining 0) is a hint to wait; otherwise the quota is fine.
 */
function parseRateLimitFieldMs(value: string): number | undefined {
  const params = new Map<string, string>();
  for (const part of value.split(/[;,]/)) {
    const [name, raw] = part.split('=');
    if (name !== undefined && raw !== undefined) params.set(name.trim().toLowerCase(), raw.trim());
  }
  const remaining = params.get('r') ?? params.get('remaining');
  const reset = params.get('t') ?? params.get('reset');
  if (remaining === undefined || reset === undefined || Number(remaining) > 0) return undefined;
  const seconds = parseDeltaSeconds(reset);
  return seconds === undefined ? undefined : seconds * 1000;
}
