/**
 * What a `wrap`ped handler's caller gets back: a `Response` that answers
 * status, headers and its bytes from the answer the guard stored (or
 * replays), and builds the real one only for anything else. Each test holds
 * it to what a real `Response` would answer, and counts the real ones built.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { idempotency, memoryIdempotencyStore } from '../../src/server.js';

const NativeResponse = globalThis.Response;

/** Counts the `Response`s constructed through the global while `run` runs. */
async function countingResponses<T>(run: () => Promise<T>): Promise<{ value: T; built: number }> {
  let built = 0;
  globalThis.Response = class extends NativeResponse {
    constructor(...args: ConstructorParameters<typeof Response>) {
      super(...args);
      built += 1;
    }
  };
  try {
    return { value: await run(), built };
  } finally {
    globalThis.Response = NativeResponse;
  }
}

const guardOf = () =>
  idempotency({
    store: memoryIdempotencyStore(),
    scopeOf: () => 'alice',
    routes: { 'POST /payments': {}, 'POST /redirect': {}, 'POST /empty': {} },
  });
const post = (path: string, key: string) =>
  new Request(`http://shop.test${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: '{"amount":100}',
  });
const BODY = '{"id":"pay_1","note":"€ 5"}';
// The handler's own Response is the runtime's, not one the counting below counts.
const pay = async () =>
  new NativeResponse(BODY, {
    status: 201,
    statusText: 'Made',
    headers: { 'Content-Type': 'application/json', ETag: '"1"' },
  });

describe('wrap answers with a Response view of the stored answer', () => {
  // The views' self-test runs on first use and builds Responses of its own: done before any counting.
  beforeAll(async () => {
    await guardOf().wrap(pay)(post('/payments', 'warm-up'));
  });

  it('gives status, headers and the exact bytes, once, as a real Response would, building none', async () => {
    const wrapped = guardOf().wrap(pay);
    const { value, built } = await countingResponses(async () => {
      const response = await wrapped(post('/payments', 'k1'));
      const seen = [
        response instanceof NativeResponse,
        Object.prototype.toString.call(response),
        response.status,
        response.statusText,
        response.ok,
        response.headers.get('content-type'),
        response.bodyUsed,
        new TextDecoder().decode(await response.arrayBuffer()),
        response.bodyUsed,
        await response.text().then(String, (error: unknown) => (error as Error).name),
      ];
      return seen;
    });
    expect(value).toEqual([
      true,
      '[object Response]',
      201,
      'Made',
      true,
      'application/json',
      false,
      BODY,
      true,
      'TypeError',
    ]);
    expect(built).toBe(0);
  });

  it('replays as a view too: the same bytes, marked, with the stored headers only', async () => {
    const wrapped = guardOf().wrap(pay);
    const first = await wrapped(post('/payments', 'k1'));
    const { value: again, built } = await countingResponses(() => wrapped(post('/payments', 'k1')));
    expect(await first.text()).toBe(BODY);
    expect([again.status, again.headers.get('idempotent-replayed'), again.headers.get('etag')]).toEqual([
      201,
      'true',
      null,
    ]);
    expect(await again.text()).toBe(BODY);
    expect(built).toBe(0);
  });

  it('builds the real Response for members it does not answer, with the same status, headers and bytes', async () => {
    const wrapped = guardOf().wrap(pay);
    const { value, built } = await countingResponses(async () => {
      const response = await wrapped(post('/payments', 'k1'));
      response.headers.set('x-added', 'yes');
      const copy = response.clone();
      const status = Object.getOwnPropertyDescriptor(NativeResponse.prototype, 'status')?.get?.call(response);
      // Proxying as `new Response(response.body, response)` reads both the stream and the init off the view.
      const proxied = new NativeResponse(response.body, response);
      return { response, copy, status, proxied };
    });
    const { response, copy, status, proxied } = value;
    expect(status).toBe(201);
    expect([copy instanceof NativeResponse, copy.status, copy.headers.get('x-added'), await copy.text()]).toEqual([
      true,
      201,
      'yes',
      BODY,
    ]);
    expect([proxied.status, proxied.statusText, proxied.headers.get('etag'), await proxied.text()]).toEqual([
      201,
      'Made',
      '"1"',
      BODY,
    ]);
    expect(response.bodyUsed).toBe(true);
    // The real one, once for every member asked (the runtime's clone is made without the constructor).
    expect(built).toBe(1);
  });

  it('has headers of its own, changeable even when the handler answered with immutable ones', async () => {
    const wrapped = guardOf().wrap(async () => NativeResponse.redirect('http://shop.test/next', 303));
    const response = await wrapped(post('/redirect', 'k1'));
    response.headers.set('x-added', 'yes');
    expect([response.status, response.headers.get('location'), response.headers.get('x-added')]).toEqual([
      303,
      'http://shop.test/next',
      'yes',
    ]);
  });

  it("reads its headers from the handler's response until changed, and a change stays its own", async () => {
    let handlers: Response | undefined;
    const wrapped = guardOf().wrap(async () => {
      handlers = await pay();
      return handlers;
    });
    const response = await wrapped(post('/payments', 'k1'));
    const parents: unknown[] = [];
    response.headers.forEach((_value, _name, parent) => {
      parents.push(parent);
    });
    const before = [...response.headers].map(([name]) => name);
    response.headers.set('x-added', 'yes');
    response.headers.delete('etag');
    expect(before).toEqual(['content-type', 'etag']);
    expect(parents).toEqual([response.headers, response.headers]);
    expect([...response.headers]).toEqual([
      ['content-type', 'application/json'],
      ['x-added', 'yes'],
    ]);
    expect([handlers?.headers.get('x-added'), handlers?.headers.get('etag')]).toEqual([null, '"1"']);
    expect(new Headers(response.headers).get('x-added')).toBe('yes');
  });

  it('a response without a body reads as empty every time, as a real one does', async () => {
    const wrapped = guardOf().wrap(async () => new NativeResponse(null, { status: 204 }));
    const response = await wrapped(post('/empty', 'k1'));
    expect([response.status, response.body, await response.text(), await response.text(), response.bodyUsed]).toEqual([
      204,
      null,
      '',
      '',
      false,
    ]);
  });
});

describe('a wrapped handler that throws before returning a promise', () => {
  it('is a failed handler, as an async one that rejects: 500, then outcome-unknown for its key', async () => {
    let runs = 0;
    const wrapped = guardOf().wrap(() => {
      runs += 1;
      throw new Error('failed at once');
    });
    const first = await wrapped(post('/payments', 'k1'));
    const again = await wrapped(post('/payments', 'k1'));
    expect([first.status, again.status, runs]).toEqual([500, 409, 1]);
    expect(((await again.json()) as { type: string }).type).toBe('urn:oncely:idempotency:outcome-unknown');
  });
});

describe('a runtime whose Response does not take a view', () => {
  it('gets real Responses from wrap, as before', async () => {
    /** A `Response` whose getter, as a native one's, refuses an object it did not make. */
    class Branded extends NativeResponse {
      override get status(): number {
        if (!Branded.made(this)) throw new TypeError('Illegal invocation');
        return super.status;
      }
      static made(value: object): boolean {
        return Object.getPrototypeOf(value) === Branded.prototype;
      }
    }
    vi.resetModules();
    globalThis.Response = Branded;
    try {
      const fresh = await import('../../src/server.js');
      const wrapped = fresh
        .idempotency({
          store: fresh.memoryIdempotencyStore(),
          scopeOf: () => 'alice',
          routes: { 'POST /payments': {} },
        })
        .wrap(pay);
      const response = await wrapped(post('/payments', 'k1'));
      expect([Branded.made(response), response.status, await response.text()]).toEqual([true, 201, BODY]);
    } finally {
      globalThis.Response = NativeResponse;
      vi.resetModules();
    }
  });
});
