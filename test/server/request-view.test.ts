/**
 * What `scopeOf` and a `wrap`ped handler get: a `Request` that answers its
 * method, URL, headers and (for the handler) body from what the guard
 * already read, and builds the real one only for anything else. Each test
 * holds it to what a real `Request` would answer, and counts the real
 * `Request`s built, which is the point of the view.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { idempotency, memoryIdempotencyStore } from '../../src/server.js';
import { serveChain, type TestServer } from '../helpers/http-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The runtime's own `Request` (the counting one below stands in for it while it counts). */
const NativeRequest = globalThis.Request;

/**
 * Counts the `Request`s for `prefix` constructed while `run` runs (through the
 * global, as the guard builds them; the guard's one-off self-test on first
 * use asks for another URL).
 */
async function countingRequests<T>(prefix: string, run: () => Promise<T>): Promise<{ value: T; built: number }> {
  const Original = globalThis.Request;
  let built = 0;
  globalThis.Request = class extends Original {
    constructor(...args: ConstructorParameters<typeof Request>) {
      super(...args);
      if (this.url.startsWith(prefix)) built += 1;
    }
  };
  try {
    return { value: await run(), built };
  } finally {
    globalThis.Request = Original;
  }
}

/** A POST through node:http, so a header can be sent on two lines. */
function send(
  url: string,
  path: string,
  headers: Record<string, string | string[]>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const pay = (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
  res.writeHead(201, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ got: req.body }));
};

describe('the middleware hands scopeOf a Request view', () => {
  it('answers method, url and headers (several lines joined) from req, an instance of Request, with no Request built', async () => {
    const seen: Record<string, unknown>[] = [];
    const guard = idempotency({
      store: memoryIdempotencyStore(),
      scopeOf: (request) => {
        seen.push({
          isRequest: request instanceof NativeRequest,
          tag: Object.prototype.toString.call(request),
          method: request.method,
          url: request.url,
          account: request.headers.get('x-account'),
          tags: request.headers.get('x-tag'),
          key: request.headers.get('idempotency-key'),
        });
        return request.headers.get('x-account') ?? '';
      },
      routes: { 'POST /payments': {} },
    });
    server = await serveChain(guard.middleware as never, pay);
    const url = server.url;
    const { value: sent, built } = await countingRequests(url, () =>
      send(
        url,
        '/payments?source=test',
        { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1', 'X-Account': 'alice', 'X-Tag': ['a', 'b'] },
        '{"amount":100}',
      ),
    );
    expect(sent).toEqual({ status: 201, text: '{"got":{"amount":100}}' });
    expect(seen).toEqual([
      {
        isRequest: true,
        tag: '[object Request]',
        method: 'POST',
        url: `${url}/payments?source=test`,
        account: 'alice',
        tags: 'a, b',
        key: 'k1',
      },
    ]);
    expect(built).toBe(0);
  });

  it('has headers that read req.headers for get and has, building no Headers, and a real one for anything else', async () => {
    const NativeHeaders = globalThis.Headers;
    const seen: Record<string, unknown>[] = [];
    let counting = false;
    let built = 0;
    const guard = idempotency({
      store: memoryIdempotencyStore(),
      scopeOf: (request) => {
        const { headers } = request;
        const read = {
          isHeaders: headers instanceof NativeHeaders,
          account: headers.get('X-Account'),
          tags: headers.get('x-tag'),
          missing: headers.get('x-missing'),
          inherited: headers.get('constructor'),
          has: [headers.has('x-ACCOUNT'), headers.has('x-missing'), headers.has('__proto__')],
        };
        const builtBeforeOthers = built;
        // Anything else is the real Headers' (a name it refuses too), and from then on `get` reads it.
        headers.set('x-account', 'changed');
        seen.push({
          ...read,
          invalid: (() => {
            try {
              return headers.get('bad name');
            } catch (error) {
              return error instanceof TypeError;
            }
          })(),
          builtBeforeOthers,
          afterSet: headers.get('x-account'),
          copy: new NativeHeaders(headers).get('x-tag'),
          names: [...headers.keys()].filter((name) => name.startsWith('x-')),
        });
        return 'alice';
      },
      routes: { 'POST /payments': {} },
    });
    server = await serveChain(guard.middleware as never, pay);
    const headers = { 'Content-Type': 'application/json', 'X-Account': 'alice', 'X-Tag': ['a', 'b'] };
    // The first request runs the views' one-off self-tests, which build Headers of their own.
    await send(server.url, '/payments', { ...headers, 'Idempotency-Key': 'k0' }, '{}');
    globalThis.Headers = class extends NativeHeaders {
      constructor(...args: ConstructorParameters<typeof Headers>) {
        super(...args);
        if (counting) built += 1;
      }
    };
    try {
      counting = true;
      expect(await send(server.url, '/payments', { ...headers, 'Idempotency-Key': 'k1' }, '{"a":1}')).toEqual({
        status: 201,
        text: '{"got":{"a":1}}',
      });
    } finally {
      counting = false;
      globalThis.Headers = NativeHeaders;
    }
    expect(seen[1]).toEqual({
      isHeaders: true,
      account: 'alice',
      tags: 'a, b',
      missing: null,
      inherited: null,
      has: [true, false, false],
      invalid: true,
      builtBeforeOthers: 0,
      afterSet: 'changed',
      copy: 'a, b',
      names: ['x-account', 'x-tag'],
    });
  });

  it('builds the real Request for any other member: signal, clone(), new Request(view), a body read', async () => {
    const seen: Record<string, unknown>[] = [];
    const guard = idempotency({
      store: memoryIdempotencyStore(),
      scopeOf: async (request) => {
        const copy = request.clone();
        const rebuilt = new Request(request, { method: 'PUT' });
        seen.push({
          signal: request.signal instanceof AbortSignal && !request.signal.aborted,
          cloneIsRequest: copy instanceof NativeRequest,
          clone: [copy.method, copy.url, copy.headers.get('x-account')],
          rebuilt: [rebuilt.method, rebuilt.url, rebuilt.headers.get('x-account')],
          // No body on it: the guard has the bytes, and downstream reads them from req.
          body: request.body,
          text: await request.text(),
        });
        return 'alice';
      },
      routes: { 'POST /payments': {} },
    });
    server = await serveChain(guard.middleware as never, pay);
    const url = server.url;
    const { value: sent, built } = await countingRequests(url, () =>
      send(
        url,
        '/payments',
        { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1', 'X-Account': 'alice' },
        '{"amount":7}',
      ),
    );
    // The downstream handler still got the body: the view read nothing from the stream.
    expect(sent).toEqual({ status: 201, text: '{"got":{"amount":7}}' });
    expect(seen).toEqual([
      {
        signal: true,
        cloneIsRequest: true,
        clone: ['POST', `${url}/payments`, 'alice'],
        rebuilt: ['PUT', `${url}/payments`, 'alice'],
        body: null,
        text: '',
      },
    ]);
    // The real one, once however many of its members were asked for, and the test's own
    // `new Request(request)` (the runtime makes a clone without its public constructor).
    expect(built).toBe(2);
  });
});

describe('a wrapped handler gets a Request view of the body the guard read', () => {
  const guardOf = () =>
    idempotency({
      store: memoryIdempotencyStore(),
      scopeOf: (request) => request.headers.get('x-account') ?? '',
      routes: { 'POST /payments': {}, 'POST /raw': {} },
    });
  const post = (path: string, body: string, key: string, contentType = 'application/json') =>
    new Request(`http://shop.test${path}`, {
      method: 'POST',
      headers: { 'Content-Type': contentType, 'Idempotency-Key': key, 'X-Account': 'alice' },
      body,
    });

  it('reads json() once from the bytes, as a real Request would, and builds no Request for it', async () => {
    const seen: unknown[] = [];
    const wrapped = guardOf().wrap(async (request) => {
      seen.push(request instanceof NativeRequest, request.method, request.url, request.headers.get('x-account'));
      seen.push(request.bodyUsed, await request.json(), request.bodyUsed);
      seen.push(await request.text().then(String, (error: unknown) => (error as Error).name));
      return Response.json({ ok: true }, { status: 201 });
    });
    const incoming = post('/payments', '{"amount":100, "currency":"EUR"}', 'k1');
    const { value: response, built } = await countingRequests('http://shop.test', () => wrapped(incoming));
    expect(response.status).toBe(201);
    expect(seen).toEqual([
      true,
      'POST',
      'http://shop.test/payments',
      'alice',
      false,
      { amount: 100, currency: 'EUR' },
      true,
      'TypeError',
    ]);
    expect(built).toBe(0);
  });

  it('gives text(), arrayBuffer() and bytes() the exact bytes, each a copy of its own', async () => {
    const body = 'amount=100&note=%E2%82%AC';
    const reads: Record<string, unknown> = {};
    const wrapped = guardOf().wrap(async (request) => {
      const which = request.headers.get('x-read');
      if (which === 'text') reads.text = await request.text();
      if (which === 'arrayBuffer') reads.arrayBuffer = new TextDecoder().decode(await request.arrayBuffer());
      if (which === 'bytes') {
        const bytes = await request.bytes();
        bytes.fill(0);
        reads.bytes = bytes.length;
      }
      return new Response('ok', { status: 201 });
    });
    for (const which of ['text', 'arrayBuffer', 'bytes']) {
      const incoming = post('/raw', body, `k-${which}`, 'application/x-www-form-urlencoded');
      incoming.headers.set('x-read', which);
      expect((await wrapped(incoming)).status).toBe(201);
    }
    expect(reads).toEqual({ text: body, arrayBuffer: body, bytes: body.length });
  });

  it('builds the real Request, with the body, for members it does not answer', async () => {
    const seen: unknown[] = [];
    const wrapped = guardOf().wrap(async (request) => {
      const copy = request.clone();
      seen.push(copy instanceof Request, await copy.json());
      seen.push(request.signal instanceof AbortSignal, request.bodyUsed);
      const form = await new Request(request).json();
      seen.push(form, request.bodyUsed);
      return new Response(null, { status: 204 });
    });
    const response = await wrapped(post('/payments', '{"amount":3}', 'k1'));
    expect(response.status).toBe(204);
    expect(seen).toEqual([true, { amount: 3 }, true, false, { amount: 3 }, true]);
  });

  it('after a read through the view, the real Request it builds is spent too', async () => {
    let outcome: unknown;
    const wrapped = guardOf().wrap(async (request) => {
      await request.json();
      outcome = [
        request.bodyUsed,
        (() => {
          try {
            request.clone();
            return 'cloned';
          } catch (error) {
            return (error as Error).name;
          }
        })(),
      ];
      return new Response(null, { status: 204 });
    });
    await wrapped(post('/payments', '{"amount":3}', 'k1'));
    expect(outcome).toEqual([true, 'TypeError']);
  });

  it('a request it does not guard reaches the handler as it came, and its Response leaves untouched', async () => {
    let got: Request | undefined;
    const sent = new Response(new ReadableStream({ start: (c) => c.close() }), { status: 200 });
    const wrapped = guardOf().wrap(async (request) => {
      got = request;
      return sent;
    });
    const incoming = new Request('http://shop.test/health', { method: 'POST', body: 'x' });
    expect(await wrapped(incoming)).toBe(sent);
    expect(got).toBe(incoming);
  });
});

describe('a runtime whose Request does not take a view', () => {
  it('hands scopeOf and the handler real Requests, as before', async () => {
    const Original = globalThis.Request;
    /** A `Request` that, as a native one, refuses an object it did not make as input. */
    class Branded extends Original {
      readonly #branded = true;
      constructor(input: RequestInfo | URL, init?: RequestInit) {
        if (typeof input === 'object' && !(input instanceof URL) && !Branded.made(input)) {
          throw new TypeError('not a Request');
        }
        super(input, init);
      }
      static made(value: object): boolean {
        return #branded in value;
      }
    }
    vi.resetModules();
    globalThis.Request = Branded;
    try {
      const fresh = await import('../../src/server.js');
      const seen: boolean[] = [];
      const guard = fresh.idempotency({
        store: fresh.memoryIdempotencyStore(),
        scopeOf: (request) => {
          seen.push(Branded.made(request));
          return 'alice';
        },
        routes: { 'POST /payments': {} },
      });
      const wrapped = guard.wrap(async (request) => {
        seen.push(Branded.made(request));
        return Response.json(await request.json(), { status: 201 });
      });
      const response = await wrapped(
        new Branded('http://shop.test/payments', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1' },
          body: '{"amount":5}',
        }),
      );
      expect([response.status, await response.text()]).toEqual([201, '{"amount":5}']);
      expect(seen).toEqual([true, true]);
    } finally {
      globalThis.Request = Original;
      vi.resetModules();
    }
  });
});
