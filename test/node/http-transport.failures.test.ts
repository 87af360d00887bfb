/**
 * The node:http transport's failures, as the attempt (flow/drive/attempt.ts)
 * judges them: a request node:http cannot build is unsendable (nothing left);
 * a refused connection is not sent (its code proves it); a reset after the
 * server had the request may have been sent; the attempt's timeout and the
 * caller's abort end it before the answer and in the middle of its body, and
 * the connection is let go. The attempt runs on a fake runtime: its timeout
 * fires when the test moves virtual time, never on the wall clock.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { performAttempt } from '../../src/flow/drive/attempt.js';
import type { TransportRequest } from '../../src/flow/transport/transport.js';
import type { StoredRequest } from '../../src/model.js';
import { nodeHttpTransport } from '../../src/node/http-transport.js';
import { createFakeRuntime } from '../../src/testing.js';
import { freePort } from '../helpers/free-port.js';
import { nextResponseHeaders, type Served, serve } from './servers.js';

const transport = nodeHttpTransport();
const opened: Served[] = [];
afterEach(async () => {
  for (const server of opened.splice(0)) await server.close();
});

async function server(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  const served = await serve(answer);
  opened.push(served);
  return served;
}

function post(url: string): StoredRequest {
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: { encoding: 'json', text: '{"amount":1}' },
  } as StoredRequest;
}

/** The request as the attempt hands it to a transport. */
function asSent(request: StoredRequest): TransportRequest {
  return { method: request.method, url: request.url, headers: request.headers, body: request.body };
}

/** A request the server holds, and a promise of its connection's close as the server sees it. */
function held() {
  let closed!: () => void;
  const gone = new Promise<void>((resolve) => {
    closed = resolve;
  });
  let received!: () => void;
  const arrived = new Promise<void>((resolve) => {
    received = resolve;
  });
  const answer = (partly: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    req.socket.once('close', closed);
    if (partly) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    }
    received();
  };
  return { arrived, gone, answer };
}

describe('node:http transport: what could not leave', () => {
  it.each([
    ['a header name node:http refuses', { 'bad name': 'x' }, 'http://127.0.0.1:1/'],
    ['a header value node:http refuses', { 'x-ok': 'a\nb' }, 'http://127.0.0.1:1/'],
    ['a URL that is none', {}, 'not a url'],
    ['credentials in the URL (fetch refuses them)', {}, 'http://user:secret@127.0.0.1:1/'],
  ])('%s: unsendable, nothing sent', async (_name, headers, url) => {
    const result = await transport(
      { method: 'POST', url, headers, body: undefined },
      { signal: new AbortController().signal, timeoutMs: 1_000, maxResponseBytes: 1_000 },
    );
    expect(result.observation).toMatchObject({ kind: 'transport_error', sent: 'not', code: 'INVALID_REQUEST' });
  });

  it('a forbidden method is unsendable, as through fetch', async () => {
    const result = await transport(
      { method: 'TRACE', url: 'http://127.0.0.1:1/', headers: {}, body: undefined },
      { signal: new AbortController().signal, timeoutMs: 1_000, maxResponseBytes: 1_000 },
    );
    expect(result.observation).toMatchObject({ kind: 'transport_error', sent: 'not' });
  });

  it('a refused connection: ECONNREFUSED, not sent', async () => {
    const rt = createFakeRuntime();
    const output = await performAttempt(transport, rt, {
      request: post(`http://127.0.0.1:${await freePort()}/payments`),
      extraHeaders: { 'idempotency-key': 'k' },
      timeoutMs: 5_000,
      signal: undefined,
    });
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'not', code: 'ECONNREFUSED' });
  });
});

describe('node:http transport: failures in flight', () => {
  it('a reset after the server read the request: may have been sent', async () => {
    const served = await server((req) => req.socket.destroy());
    const output = await performAttempt(transport, createFakeRuntime(), {
      request: post(`${served.url}/payments`),
      extraHeaders: { 'idempotency-key': 'k' },
      timeoutMs: 5_000,
      signal: undefined,
    });
    expect(served.received).toHaveLength(1);
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'maybe', code: 'ECONNRESET' });
  });

  it('a reset in the middle of the body: may have been sent', async () => {
    const served = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":', () => res.socket?.destroy());
    });
    const output = await performAttempt(transport, createFakeRuntime(), {
      request: post(`${served.url}/payments`),
      extraHeaders: {},
      timeoutMs: 5_000,
      signal: undefined,
    });
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'maybe' });
  });

  it.each([
    ['before the answer', false],
    ['in the middle of the body', true],
  ])('the attempt timeout %s: a timeout, the connection let go', async (_name, partly) => {
    const rt = createFakeRuntime();
    const hold = held();
    const served = await server(hold.answer(partly));
    const headers = partly ? nextResponseHeaders() : Promise.resolve();
    const attempt = performAttempt(transport, rt, {
      request: post(`${served.url}/payments`),
      extraHeaders: {},
      timeoutMs: 5_000,
      signal: undefined,
    });
    await hold.arrived;
    await headers;
    await rt.advance(5_000);
    expect((await attempt).observation).toEqual({ kind: 'timeout', afterMs: 5_000 });
    await hold.gone;
  });

  it.each([
    ['before the answer', false],
    ['in the middle of the body', true],
  ])("the caller's abort %s: aborted, may have been sent, the connection let go", async (_name, partly) => {
    const hold = held();
    const served = await server(hold.answer(partly));
    const headers = partly ? nextResponseHeaders() : Promise.resolve();
    const caller = new AbortController();
    const attempt = performAttempt(transport, createFakeRuntime(), {
      request: post(`${served.url}/payments`),
      extraHeaders: {},
      timeoutMs: 5_000,
      signal: caller.signal,
    });
    await hold.arrived;
    await headers;
    caller.abort(new Error('the caller gave up'));
    expect((await attempt).observation).toEqual({ kind: 'aborted', sent: 'maybe' });
    await hold.gone;
  });

  it("rejects with the abort's reason, as fetch does (mid-body too)", async () => {
    const hold = held();
    const served = await server(hold.answer(true));
    const headers = nextResponseHeaders();
    const controller = new AbortController();
    const reason = new Error('attempt timeout');
    const sent = transport(asSent(post(`${served.url}/x`)), {
      signal: controller.signal,
      timeoutMs: 1,
      maxResponseBytes: 1_000,
    });
    await hold.arrived;
    await headers;
    controller.abort(reason);
    await expect(sent).rejects.toBe(reason);
    // Already aborted: nothing is sent at all.
    await expect(
      transport(asSent(post(`${served.url}/y`)), { signal: controller.signal, timeoutMs: 1, maxResponseBytes: 1_000 }),
    ).rejects.toBe(reason);
    expect(served.received.map((r) => r.path)).toEqual(['/x']);
  });
});
