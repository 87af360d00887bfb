import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfterMs, parseServerHintMs } from '../../src/policy/retry-after.js';

const NOW = Date.UTC(1994, 10, 6, 8, 49, 0); // Sun, 06 Nov 1994 08:49:00 GMT

function headers(values: Record<string, string>) {
  return (name: string) => values[name.toLowerCase()] ?? null;
}

describe('Retry-After', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7_000],
    ['Sun, 06 Nov 1994 08:49:37 GMT', 37_000], // IMF-fixdate
    ['Sunday, 06-Nov-94 08:49:37 GMT', 37_000], // RFC 850
    ['Sun Nov  6 08:49:37 1994', 37_000], // asctime, read as GMT
    ['Sun, 06 Nov 1994 08:48:00 GMT', 0], // in the past: now
  ])('%j → %d ms', (value, expected) => {
    expect(parseRetryAfterMs(value, NOW)).toBe(expected);
  });

  it.each(['-1', '1.5', 'soon', '', 'Sun, 06 Foo 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 08:49:37 PST'])(
    'rejects %j',
    (value) => {
      expect(parseRetryAfterMs(value, NOW)).toBeUndefined();
    },
  );

  it('reads two-digit RFC 850 years around the 1970 pivot', () => {
    expect(new Date(parseHttpDate('Monday, 01-Jan-69 00:00:00 GMT') ?? 0).getUTCFullYear()).toBe(2069);
    expect(new Date(parseHttpDate('Thursday, 01-Jan-70 00:00:00 GMT') ?? 0).getUTCFullYear()).toBe(1970);
  });
});

describe('server hints', () => {
  it('prefers Retry-After over RateLimit headers', () => {
    expect(parseServerHintMs(headers({ 'retry-after': '3', 'ratelimit-reset': '9' }), NOW)).toBe(3_000);
  });

  it('reads RateLimit-Reset as delta seconds', () => {
    expect(parseServerHintMs(headers({ 'ratelimit-reset': '9' }), NOW)).toBe(9_000);
  });

  it('reads both forms of the RateLimit field, only when exhausted', () => {
    expect(parseServerHintMs(headers({ ratelimit: 'limit=100, remaining=0, reset=5' }), NOW)).toBe(5_000);
    expect(parseServerHintMs(headers({ ratelimit: '"default";r=0;t=12' }), NOW)).toBe(12_000);
    expect(parseServerHintMs(headers({ ratelimit: '"default";r=3;t=12' }), NOW)).toBeUndefined();
  });

  it('gives no hint when there is none', () => {
    expect(parseServerHintMs(headers({}), NOW)).toBeUndefined();
    expect(parseServerHintMs(headers({ 'retry-after': 'later' }), NOW)).toBeUndefined();
  });
});
