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

  it('rejects malformed patterns', () => {
    expect(() => parseEndpointPattern('payments')).toThrow(/must start with/);
    expect(() => parseEndpointPattern('P0ST /payments')).toThrow(/invalid method/);
  });
});
