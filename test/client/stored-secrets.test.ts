/**
 * No secrets at rest: stored request headers are an allow-list
 * (`content-type`, `accept`, `content-language`, and the endpoint's
 * `storeHeaders`), and a URL whose query names look like credentials is
 * refused unless the endpoint's `storeQuery` allows them. Both before
 * anything is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, InvalidOptionsError, InvalidRequestError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('stored headers are an allow-list', () => {
  it.each(['X-Session-Id', 'X-Secret', 'Private-Token', 'X-Amz-Security-Token', 'Origin'])(
    '%s is refused, pointing to the headers callback',
    async (name) => {
      const h = await harness();
      const error = await h.client
        .send({ method: 'POST', url: '/payments', json: {}, headers: { [name]: 'v' } })
        .catch((e) => e);
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).field).toBe(`headers.${name}`);
      expect((error as Error).message).toMatch(/`headers` callback/);
      expect((error as Error).message).toMatch(/storeHeaders/);
      expect(await h.client.list()).toHaveLength(0);
      expect(h.server.ledger.requests).toHaveLength(0);
    },
  );

  it('content-type, accept and content-language are stored; storeHeaders names more, per endpoint', async () => {
    const seen: Headers[] = [];
    const h = await harness({ endpoints: { 'POST /tenants/**': { storeHeaders: ['X-Tenant'] } } });
    const spy = h.another({
      fetch: (input, init) => {
        seen.push(new Headers(init?.headers));
        return h.rt.fetch(input, init);
      },
    });
    const headers = { Accept: 'application/json', 'Content-Language': 'de', 'X-Tenant': 't1' };
    await h.rt.run(spy.send({ method: 'POST', url: '/tenants/t1/payments', key: 'ok', json: {}, headers }));
    expect((await spy.get('ok'))?.request.headers).toEqual({
      accept: 'application/json',
      'content-language': 'de',
      'x-tenant': 't1',
      'content-type': 'application/json',
    });
    expect(seen[0]?.get('x-tenant')).toBe('t1');
    // The same header elsewhere is not allowed.
    await expect(
      spy.send({ method: 'POST', url: '/payments', json: {}, headers: { 'X-Tenant': 't1' } }),
    ).rejects.toThrow(/headers.X-Tenant/);
  });

  it('storeHeaders cannot name credentials or the key header, and must be header names', () => {
    const bad: Array<[object, string]> = [
      [{ policy: { storeHeaders: ['Authorization'] } }, 'policy.storeHeaders'],
      [{ endpoints: { 'POST /p': { storeHeaders: ['cookie'] } } }, 'endpoints["POST /p"].storeHeaders'],
      [{ policy: { storeHeaders: ['Idempotency-Key'] } }, 'policy.storeHeaders'],
      [{ policy: { storeHeaders: ['bad name'] } }, 'policy.storeHeaders.0'],
      [{ policy: { storeQuery: [''] } }, 'policy.storeQuery.0'],
    ];
    for (const [options, field] of bad) {
      const error = (() => {
        try {
          createClient(options);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).field).toBe(field);
    }
  });

  it('configured denied headers win over storeHeaders', async () => {
    const h = await harness({ deniedHeaders: ['X-Session'], policy: { storeHeaders: ['X-Session'] } });
    await expect(h.client.send({ method: 'POST', url: '/p', json: {}, headers: { 'x-session': 's' } })).rejects.toThrow(
      /never stored/,
    );
  });
});

describe('credential-like query parameters are refused', () => {
  it.each([
    'key',
    'api_key',
    'apiKey',
    'API-KEY',
    'token',
    'access_token',
    'refresh_token',
    'secret',
    'client_secret',
    'signature',
    'X-Amz-Signature',
    'sig',
    'password',
    'auth',
  ])('?%s=…', async (name) => {
    const h = await harness();
    const error = await h.client
      .send({ method: 'POST', url: `/payments?amount=1&${name}=s3cr3t`, json: {} })
      .catch((e) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).field).toBe(`url.query.${name}`);
    expect((error as Error).message).toMatch(/storeQuery/);
    expect(await h.client.list()).toHaveLength(0);
    expect(h.server.ledger.requests).toHaveLength(0);
  });

  it('storeQuery allows a name for its endpoint; ordinary names pass', async () => {
    const h = await harness({ endpoints: { 'POST /pages': { storeQuery: ['Page_Token'] } } });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/pages?page_token=p2&amount=3', json: {} }));
    expect(result.status).toBe(201);
    expect(h.server.ledger.requests[0]?.path).toBe('/pages?page_token=p2&amount=3');
    await expect(h.client.send({ method: 'POST', url: '/payments?page_token=p2', json: {} })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
  });
});

describe('query names are judged as a server may read them', () => {
  // Decoded, trimmed, brackets and separators dropped, case- and camel/snake-insensitive.
  it.each([
    'token[]',
    'token%00',
    '%22token%20%22',
    'access_key',
    'accessKey',
    'private_key',
    'passcode',
    'hmac',
    'sid',
    'tokens',
  ])('?%s=… is refused', async (name) => {
    const h = await harness();
    const error = await h.client
      .send({ method: 'POST', url: `/payments?amount=1&${name}=s3cr3t`, json: {} })
      .catch((e) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).field).toMatch(/^url\.query\./);
    expect(await h.client.list()).toHaveLength(0);
    expect(h.server.ledger.requests).toHaveLength(0);
  });

  it('storeQuery allows a name however it is spelled', async () => {
    const h = await harness({ policy: { storeQuery: ['page_token'] } });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/pages?pageToken=p2', json: {} }));
    expect(result.status).toBe(201);
  });
});

it('a fragment is never stored (fetch never sends one, and it can hold a secret)', async () => {
  const h = await harness();
  await h.rt.run(h.client.send({ method: 'POST', url: '/payments?amount=1#access_token=s3cr3t', key: 'f', json: {} }));
  expect((await h.client.get('f'))?.request.url).toBe(`${h.server.url}/payments?amount=1`);
  expect(JSON.stringify(await h.client.list())).not.toMatch(/s3cr3t/);
});

it.each(['set-cookie', 'Authorization', 'x-auth-token', 'Cookie'])(
  'resultHeaders cannot name %s, as storeHeaders cannot',
  (name) => {
    const error = (() => {
      try {
        createClient({ resultHeaders: ['x-request-id', name] });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).field).toBe('resultHeaders.1');
    expect((error as Error).message).toMatch(/never stored/);
  },
);
