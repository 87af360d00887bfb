/**
 * The checks of a request's optional parts (flow/request/optional-parts.ts:
 * a URL's port against the Fetch standard's blocked ports, its query against
 * credential-like names, the copy of `meta`) are loaded with `import()` only
 * for a request that has one: a page whose API is at its scheme's default
 * port, with no `meta`, never downloads them. A load that fails (a chunk the
 * page could not fetch) rejects that call with nothing stored or sent; the
 * next call loads them and checks as always.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidRequestError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/request/optional-parts.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'optional-parts.js', importOriginal),
);

afterEach(closeAll);

describe("the checks of a request's optional parts", () => {
  it('load only for a URL with a port or a query, or for meta; a failed load stores and sends nothing, the next call checks', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    // An API at https's default port, reached through a fetch that routes it to the test server.
    const api = 'https://api.shop.test';
    const atDefaultPort = h.another({
      baseUrl: api,
      fetch: (input, init) => h.rt.fetch(String(input).replace(api, h.server.url), init),
    });
    const plain = await h.rt.run(atDefaultPort.send({ method: 'POST', url: '/payments', key: 'plain', json: {} }));
    expect(plain).toMatchObject({ key: 'plain', status: 201 });
    expect(load.attempts).toBe(0);

    // The test server's URL names its port: this send needs the checks, and they cannot load.
    load.failuresLeft = 1;
    const failed = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} })));
    expect(load.attempts).toBe(1);
    expect(loadError(failed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(await h.store.get('p1')).toBeUndefined();
    expect(h.server.ledger.requestsFor('p1')).toHaveLength(0);

    // The next call loads them, passes and is sent once, with the same key.
    const sent = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} }));
    expect(sent).toMatchObject({ key: 'p1', status: 201 });
    expect(load.attempts).toBe(2);
    expect(h.server.ledger.requestsFor('p1')).toHaveLength(1);

    // A query at the default port needs them too; a blocked port and a credential in the query are refused.
    const query = await rejection(
      h.rt.run(atDefaultPort.send({ method: 'POST', url: '/payments?access_token=t', key: 'q1', json: {} })),
    );
    expect(query).toBeInstanceOf(InvalidRequestError);
    expect(query).toMatchObject({ field: 'url.query.access_token' });
    const port = await rejection(
      h.rt.run(atDefaultPort.send({ method: 'POST', url: 'http://127.0.0.1:6000/p', key: 'b1', json: {} })),
    );
    expect(port).toMatchObject({ field: 'url', message: 'Invalid request `url`: port 6000 is blocked by fetch' });
    expect(await h.store.get('q1')).toBeUndefined();
    expect(await h.store.get('b1')).toBeUndefined();

    // `meta` at the default port: copied as plain JSON by the same checks, or refused naming its field.
    const withMeta = await h.rt.run(
      atDefaultPort.send({ method: 'POST', url: '/payments', key: 'm1', json: {}, meta: { cart: 'c1', n: [1] } }),
    );
    expect(withMeta).toMatchObject({ key: 'm1', status: 201 });
    expect((await h.store.get('m1'))?.meta).toEqual({ cart: 'c1', n: [1] });
    const badMeta = await rejection(
      h.rt.run(
        atDefaultPort.send({ method: 'POST', url: '/payments', key: 'm2', json: {}, meta: { at: new Date(0) } }),
      ),
    );
    expect(badMeta).toMatchObject({ code: 'invalid_request', field: 'meta.at' });
    expect(await h.store.get('m2')).toBeUndefined();
    expect(h.server.ledger.requests).toHaveLength(3);
  });
});
