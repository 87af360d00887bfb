/**
 * Path and query read off a request target or a `Request`'s URL without
 * the URL parser must be exactly what the parser gives (the fingerprint
 * and the route match both read them), for plain targets and every kind
 * the fast reading hands to the parser.
 */
import { describe, expect, it } from 'vitest';
import { targetParts, urlParts } from '../../src/server/target.js';

const TARGETS = [
  '/payments',
  '/payments?x=1&y=2',
  '/payments?',
  '/payments?a=%20b',
  '/pay%6Dents',
  '/a/./b/../c',
  '//evil/payments',
  '/payments#frag',
  '/payments?x=1#frag',
  '/caf\u00e9',
  '/a b',
  '/a\\b',
  "/~user/it's;v=1:@!$&*+,=",
];

describe('targetParts and urlParts', () => {
  it.each(TARGETS)('read %j as the URL parser does', (target) => {
    const parsed = new URL(target, 'http://localhost');
    expect(targetParts(target)).toEqual({ pathname: parsed.pathname, search: parsed.search });
    for (const origin of ['http://shop.test', 'https://user:pw@shop.test:8443']) {
      // As a `Request` has it: serialised by the parser already (`/.//x` keeps a path that starts with `//`).
      const url = new URL(`${origin}${target.startsWith('//') ? `/.${target}` : target}`).href;
      const whole = new URL(url);
      expect(urlParts(url)).toEqual({ pathname: whole.pathname, search: whole.search });
    }
  });

  it('reads a URL of another scheme through the parser', () => {
    expect(urlParts('file:///payments?x=1')).toEqual({ pathname: '/payments', search: '?x=1' });
  });
});
