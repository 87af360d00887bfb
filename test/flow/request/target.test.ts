/**
 * fetch's conventions, as pure functions: the method default, `baseUrl`
 * joined like ky's `prefixUrl`, and the path endpoint rules see.
 */
import { describe, expect, it } from 'vitest';
import { methodOf } from '../../../src/flow/request/operation.js';
import { pathWithinBase, resolveUrl } from '../../../src/flow/request/target.js';
import { createClient, InvalidRequestError } from '../../../src/index.js';

const refusal = (fn: () => unknown): InvalidRequestError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('methodOf: as fetch, GET when none is given; a body needs a method', () => {
  it('no method and no body is a GET', () => {
    expect(methodOf({})).toBe('GET');
  });

  it.each([{ json: { amount: 1 } }, { body: 'text' }, { body: new Uint8Array([1]) }, { json: null }])(
    'a body without a method (%o) is refused naming `method`, never guessed',
    (request) => {
      const error = refusal(() => methodOf(request));
      expect(error.field).toBe('method');
      expect(error.message).toContain("a request with a body needs a method, e.g. method: 'POST'");
    },
  );

  it('a given method is upper-cased; one that is no method is refused', () => {
    expect(methodOf({ method: 'post', json: {} })).toBe('POST');
    expect(refusal(() => methodOf({ method: 'PO ST' })).field).toBe('method');
  });
});

describe('resolveUrl joins baseUrl as ky joins prefixUrl', () => {
  const base = 'https://api.example.com/v1/';

  it.each([
    ['/payments', base],
    ['payments', base],
    ['/payments', 'https://api.example.com/v1'],
    ['//payments', 'https://api.example.com/v1//'],
  ])('%s under %s → …/v1/payments, one slash at the join', (url, baseUrl) => {
    expect(resolveUrl(url, baseUrl).href).toBe('https://api.example.com/v1/payments');
  });

  it('keeps the query and the rest of the path', () => {
    expect(resolveUrl('/payments/p_1?expand=customer', base).href).toBe(
      'https://api.example.com/v1/payments/p_1?expand=customer',
    );
    expect(resolveUrl('?page=2', base).href).toBe('https://api.example.com/v1/?page=2');
    expect(resolveUrl('', base).href).toBe(base);
  });

  it('uses absolute URLs (strings and URL objects) as they are', () => {
    expect(resolveUrl('https://other.test/x', base).href).toBe('https://other.test/x');
    expect(resolveUrl(new URL('https://other.test/y'), base).href).toBe('https://other.test/y');
  });

  it('without a baseUrl, a relative URL is refused naming `url`', () => {
    const error = refusal(() => resolveUrl('/payments', undefined));
    expect(error.field).toBe('url');
    expect(error.message).toContain('no baseUrl is set');
  });
});

describe('pathWithinBase: the path endpoint rules match', () => {
  const base = new URL('https://api.example.com/v1/');

  it.each([
    ['https://api.example.com/v1/payments', '/payments'],
    ['https://api.example.com/v1/payments/p_1/capture', '/payments/p_1/capture'],
    ['https://api.example.com/v1', '/'],
    ['https://api.example.com/v10/payments', '/v10/payments'],
    ['https://api.example.com/v2/payments', '/v2/payments'],
    ['https://other.test/v1/payments', '/v1/payments'],
  ])('%s → %s', (url, path) => {
    expect(pathWithinBase(new URL(url), base)).toBe(path);
  });

  it('is the whole path without a base, or with a base that has none', () => {
    expect(pathWithinBase(new URL('https://api.example.com/v1/payments'), undefined)).toBe('/v1/payments');
    expect(pathWithinBase(new URL('https://api.example.com/payments'), new URL('https://api.example.com'))).toBe(
      '/payments',
    );
  });

  it("the README's rule 'POST /payments' matches under a baseUrl with a path", async () => {
    const client = createClient({
      baseUrl: 'https://api.example.com/v1/',
      endpoints: { 'POST /payments': { profile: 'stripe' }, 'GET /payments/*': { deadlineMs: 5_000 } },
    });
    expect(client.policyFor('POST', '/payments').name).toBe('POST /payments');
    expect(client.policyFor('POST', 'https://api.example.com/v1/payments').name).toBe('POST /payments');
    expect(client.policyFor('GET', 'payments/p_1').name).toBe('GET /payments/*');
    // Rules see the path relative to the base: the full path is not what they are written against.
    expect(client.policyFor('POST', 'https://api.example.com/v2/payments').name).toBe('default');
    await client.close();
  });
});
