import { describe, expect, it } from 'vitest';
import { matchesEndpoint, parseEndpointPattern, selectEndpoint } from '../../src/policy/endpoints.js';

describe('endpoint patterns', () => {
  it.each([
    ['POST /payments', 'POST', '/payments', true],
    ['POST /payments', 'post', '/payments/', true],
    ['POST /payments', 'GET', '/payments', false],
    ['/payments', 'PUT', '/payments', true],
    ['POST /payments/*', 'POST', '/payments/p_1', true],
    ['POST /payments/*', 'POST', '/payments/p_1/capture', false],
    ['GET /catalog/**', 'GET', '/catalog', true],
    ['GET /catalog/**', 'GET', '/catalog/a/b/c', true],
    ['/v1/**/refunds', 'POST', '/v1/charges/ch_1/refunds', true],
    ['/v1/**/refunds', 'POST', '/v1/charges/ch_1', false],
  ])('%s matches %s %s: %s', (pattern, method, path, expected) => {
    expect(matchesEndpoint(parseEndpointPattern(pattern), method, path)).toBe(expected);
  });

  it('the most specific rule wins, ties go to the first listed', () => {
    const patterns = ['/**', 'POST /payments/**', '/payments/*', 'POST /payments/*', 'POST /payments/*'].map(
      parseEndpointPattern,
    );
    expect(selectEndpoint(patterns, 'POST', '/payments/p_1')).toBe(3);
    expect(selectEndpoint(patterns, 'GET', '/payments/p_1')).toBe(2);
    expect(selectEndpoint(patterns, 'POST', '/payments/p_1/capture')).toBe(1);
    expect(selectEndpoint(patterns, 'GET', '/health')).toBe(0);
    expect(selectEndpoint([parseEndpointPattern('/a')], 'GET', '/b')).toBe(-1);
  });

  it('rejects malformed patterns, naming the pattern and the accepted forms', () => {
    expect(() => parseEndpointPattern('payments')).toThrow(/"payments" has no path starting with "\/".*accepted forms/);
    expect(() => parseEndpointPattern('P0ST /payments')).toThrow(
      /"P0ST \/payments" names "P0ST", which is not a method/,
    );
  });

  it.each([
    ['ANY /x', /"ANY \/x" names "ANY", which is not a method \(omit the method to match every method: '\/x'\)/],
    ['* /x', /names "\*", which is not a method \(omit the method/],
    ['FETCH /x', /"FETCH \/x" names "FETCH", which is not a method; methods: GET, HEAD, POST/],
    ['GET /search?q=1', /"GET \/search\?q=1" has a query string or fragment.*use '\/search'/],
    ['/docs#intro', /"\/docs#intro" has a query string or fragment.*use '\/docs'/],
    ['POST /a b', /"POST \/a b" has a space inside its path/],
    ['https://api.example.com/payments', /has no path starting with "\/"/],
  ])('refuses %s, which could never match', (pattern, message) => {
    expect(() => parseEndpointPattern(pattern)).toThrow(message);
  });

  it('accepts every HTTP method, in any case, and a tab as the separator', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'patch']) {
      expect(parseEndpointPattern(`${method} /x`).method).toBe(method.toUpperCase());
    }
    expect(parseEndpointPattern('POST\t/x')).toMatchObject({ method: 'POST', segments: ['x'] });
  });
});
