/**
 * A request `fetch` would refuse locally is refused before the write-ahead,
 * naming the field: nothing is stored and nothing reaches the server. It used
 * to be stored, "retried" as ambiguous and end `unknown` with no request at
 * the server. After the write-ahead, a request `fetch` refuses to build
 * (a bad value from the `headers` callback) is `not_sent`, never ambiguous.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidRequestError, type OncelyRequest } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

async function refused(request: OncelyRequest, field: string | RegExp): Promise<InvalidRequestError> {
  const h = await harness();
  const error = await h.rt.run(h.client.send(request)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidRequestError);
  expect(error).toMatchObject({ code: 'invalid_request', name: 'InvalidRequestError' });
  expect((error as InvalidRequestError).field).toMatch(field);
  expect(await h.client.list()).toHaveLength(0);
  expect(h.server.ledger.requests).toHaveLength(0);
  return error as InvalidRequestError;
}

describe('refused before the write-ahead', () => {
  it.each(['GET', 'HEAD'])('%s with a body', async (method) => {
    await refused({ method, url: '/catalog', json: { q: 1 } }, 'body');
    await refused({ method, url: '/catalog', body: 'x' }, 'body');
  });

  it.each([
    ['a stream', () => new ReadableStream<Uint8Array>(), 'ReadableStream'],
    ['FormData', () => new FormData(), 'FormData'],
    ['a Blob', () => new Blob(['x']), 'Blob'],
    ['URLSearchParams', () => new URLSearchParams({ a: '1' }), 'URLSearchParams'],
  ])('a body that cannot be stored for a resend (%s), saying why', async (_label, make, kind) => {
    const body = make() as unknown as string;
    const error = await refused({ method: 'POST', url: '/upload', body }, 'body');
    expect(error.message).toContain(`(got ${kind})`);
    expect(error.message).toMatch(/stored and resent after a crash/);
    expect(error.message).toMatch(/a stream can be read only once/);
  });

  it.each(['TRACE', 'CONNECT', 'TRACK', 'trace'])('method %s', async (method) => {
    await refused({ method, url: '/payments' }, 'method');
  });

  it.each([
    'http://127.0.0.1:6000/payments',
    'http://127.0.0.1:0/payments',
    'ftp://127.0.0.1/payments',
    'ws://127.0.0.1/payments',
    'file:///etc/passwd',
    'http://user:secret@127.0.0.1/payments',
    'http://user@127.0.0.1/payments',
  ])('url %s', async (url) => {
    await refused({ method: 'POST', url, json: {} }, 'url');
  });

  it('a stored header with CR/LF, or an invalid name', async () => {
    await refused({ method: 'POST', url: '/p', json: {}, headers: { accept: 'a\r\nX-Injected: 1' } }, 'headers.accept');
    await refused(
      { method: 'POST', url: '/p', json: {}, headers: { 'content-type': 'text/plain\n' } },
      'headers.content-type',
    );
    await refused({ method: 'POST', url: '/p', json: {}, headers: { 'bad name': 'x' } }, 'headers.bad name');
    await refused({ method: 'POST', url: '/p', json: {}, headers: { accept: 'caf\u20ac' } }, 'headers.accept');
  });

  it('meta that is not plain JSON: a cycle, a function, a Date, more than 32 levels', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    await refused({ method: 'POST', url: '/p', json: {}, meta: cyclic }, 'meta.self');
    await refused({ method: 'POST', url: '/p', json: {}, meta: { fn: () => 1 } }, 'meta.fn');
    await refused({ method: 'POST', url: '/p', json: {}, meta: { at: new Date(0) } }, 'meta.at');
    await refused({ method: 'POST', url: '/p', json: {}, meta: { n: Number.NaN } }, 'meta.n');
    await refused({ method: 'POST', url: '/p', json: {}, meta: { big: 1n } }, 'meta.big');
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 32; i++) deep = { d: deep };
    const error = await refused({ method: 'POST', url: '/p', json: {}, meta: deep }, /^meta(\.d)+$/);
    expect(error.message).toMatch(/32 levels/);
  });

  it('plain meta up to 32 levels is stored as a copy, without undefined properties', async () => {
    const h = await harness();
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 30; i++) deep = { d: deep };
    const meta = { userId: 'u1', tags: ['a', null, 2], skip: undefined, deep };
    await h.rt.run(h.client.send({ method: 'POST', url: '/p', key: 'm1', json: {}, meta }));
    meta.userId = 'changed';
    const stored = (await h.client.get('m1'))?.meta;
    expect(stored).toEqual({ userId: 'u1', tags: ['a', null, 2], deep });
    expect(stored).not.toHaveProperty('skip');
  });
});

/** Neither `send` nor `enqueue` writes it: both go through the same checks (and `enqueue` rejects itself, not its `settled`). */
async function refusedByBoth(request: OncelyRequest, field: string): Promise<InvalidRequestError[]> {
  const fromSend = await refused(request, field);
  const h = await harness();
  const fromEnqueue = await h.rt.run(h.client.enqueue(request)).catch((e: unknown) => e);
  expect(fromEnqueue).toBeInstanceOf(InvalidRequestError);
  expect((fromEnqueue as InvalidRequestError).field).toBe(field);
  expect(await h.client.list()).toHaveLength(0);
  expect(h.server.ledger.requests).toHaveLength(0);
  return [fromSend, fromEnqueue as InvalidRequestError];
}

describe('signal and responseSchema are checked before the write-ahead', () => {
  // Before: the AbortController was written ahead, its first attempt died on `signal.addEventListener`
  // with nothing sent, and the record stayed in_flight, "may have taken effect", for good.
  it.each([
    ['the AbortController instead of its signal', () => new AbortController()],
    ['null', () => null],
    ['a plain object', () => ({})],
    ['a string', () => 'abort'],
  ])('a signal that is no AbortSignal (%s) is refused, naming `signal`', async (_label, make) => {
    const signal = make() as unknown as AbortSignal;
    for (const error of await refusedByBoth({ method: 'POST', url: '/payments', json: {}, signal }, 'signal')) {
      expect(error.message).toMatch(/AbortSignal/);
    }
  });

  it('the AbortController mistake is named as such', async () => {
    const signal = new AbortController() as unknown as AbortSignal;
    const error = await refused({ method: 'POST', url: '/payments', json: {}, signal }, 'signal');
    expect(error.message).toMatch(/controller\.signal/);
  });

  it('an AbortSignal-like object from elsewhere (a polyfill, another realm) is accepted and aborts', async () => {
    // Not an instance of this realm's AbortSignal: only its shape is checked.
    class PolyfillSignal extends EventTarget {
      aborted = false;
      reason: unknown;
      abort(): void {
        this.aborted = true;
        this.reason = new Error('stop');
        this.dispatchEvent(new Event('abort'));
      }
    }
    const h = await harness();
    const ok = new PolyfillSignal() as unknown as AbortSignal;
    const result = await h.rt.run(
      h.client.send({ method: 'POST', url: '/payments', key: 'poly', json: {}, signal: ok }),
    );
    expect(result.status).toBe(201);
    const stopped = new PolyfillSignal();
    stopped.abort();
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'poly-2', json: {}, signal: stopped as never }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortError', key: 'poly-2', state: 'failed', reason: 'aborted' });
    expect(h.server.ledger.requestsFor('poly-2')).toHaveLength(0);
  });

  // Before: a schema that only has `parse` (zod before 3.24, yup) was written ahead and sent; the
  // payment succeeded, then `send` rejected with a TypeError: no key, not an OncelyError.
  it.each([
    ['a schema with only parse()', () => ({ parse: (v: unknown) => v })],
    ['~standard without validate', () => ({ '~standard': { version: 1, vendor: 'x' } })],
    ['~standard.validate that is no function', () => ({ '~standard': { version: 1, vendor: 'x', validate: true } })],
    ['null', () => null],
    ['a function', () => (v: unknown) => v],
  ])('a responseSchema that is no Standard Schema (%s) is refused, naming `responseSchema`', async (_label, make) => {
    const responseSchema = make() as never;
    for (const error of await refusedByBoth(
      { method: 'POST', url: '/payments', json: { amount: 1 }, responseSchema },
      'responseSchema',
    )) {
      expect(error.message).toMatch(/Standard Schema/);
    }
  });
});

describe('after the write-ahead: a request fetch will not build was never sent', () => {
  it('a headers-callback value with CR/LF is not_sent (no request, ends failed, never unknown)', async () => {
    const h = await harness({
      headers: () => ({ authorization: 'Bearer a\r\nX-Injected: 1' }),
      policy: { deadlineMs: 3_000 },
    });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'crlf', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', reason: 'deadline', key: 'crlf' });
    expect(h.server.ledger.requests).toHaveLength(0);
    const record = await h.client.get('crlf');
    expect(record?.attempts.length).toBeGreaterThan(0);
    for (const attempt of record?.attempts ?? []) {
      expect(attempt).toMatchObject({ class: 'not_sent', sent: 'not', effect: 'none' });
      expect(attempt.error).toMatch(/authorization/);
    }
  });

  it('an invalid header name from the callback is not_sent too', async () => {
    const h = await harness({ headers: () => ({ 'x bad': 'v' }), policy: { deadlineMs: 2_000 } });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'nm', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed' });
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});
