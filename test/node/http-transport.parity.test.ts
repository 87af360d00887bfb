/**
 * The node:http transport observes what the fetch transport observes, for
 * the same exchanges with a real server: status, headers (lower case,
 * repeated ones joined), body bytes (decoded, capped), redirects with their
 * status and Location (the fetch here is a wrapper of Node's, which shows
 * them), and the server receives the same request from both.
 */
import type { ServerResponse } from 'node:http';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultTransport, type Transport, type TransportResult } from '../../src/flow/transport/transport.js';
import type { StoredBody } from '../../src/model.js';
import { nodeHttpTransport } from '../../src/node/http-transport.js';
import { type Served, serve } from './servers.js';

/** Each path's answer. */
const ANSWERS: Record<string, (res: ServerResponse) => void> = {
  '/created': (res) => json(res, 201, { id: 'pay_1', amount: 4800 }),
  '/refused': (res) => json(res, 422, { error: { code: 'card_declined' } }),
  '/unavailable': (res) => json(res, 503, { error: 'try later' }, { 'retry-after': '2' }),
  '/empty': (res) => {
    res.writeHead(204, { 'request-id': 'req_204' });
    res.end();
  },
  '/binary': (res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(Buffer.from([0, 1, 2, 254, 255, 128, 10, 13]));
  },
  '/large': (res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(Buffer.alloc(70_000, 'a'));
  },
  '/gzip': (res) => compressed(res, 'gzip', zlib.gzipSync(JSON.stringify({ zipped: true }))),
  '/deflate': (res) => compressed(res, 'deflate', zlib.deflateSync('zlib-wrapped deflate')),
  '/raw-deflate': (res) => compressed(res, 'deflate', zlib.deflateRawSync('raw deflate')),
  '/br': (res) => compressed(res, 'br', zlib.brotliCompressSync('brotli')),
  '/two-codings': (res) => compressed(res, 'gzip, br', zlib.brotliCompressSync(zlib.gzipSync('gzip then br'))),
  '/unknown-coding': (res) => compressed(res, 'zstd', Buffer.from('left as sent')),
  '/partly-unknown': (res) => compressed(res, 'zstd, gzip', zlib.gzipSync('not zstd under it')),
  '/six-codings': (res) => compressed(res, 'gzip, gzip, gzip, gzip, gzip, gzip', Buffer.from('never decoded')),
  '/large-gzip': (res) => compressed(res, 'gzip', zlib.gzipSync(Buffer.alloc(200_000, 'z'))),
  '/repeated': (res) => {
    res.setHeader('x-trace', ['a', 'b', 'c']);
    res.setHeader('Set-Cookie', ['one=1', 'two=2']);
    res.setHeader('Content-Type', 'text/plain');
    res.setHeader('Vary', ['accept', 'accept-encoding']);
    res.writeHead(200);
    res.end('repeated');
  },
  '/moved': (res) => redirect(res, 301, '/new-home'),
  '/see-other': (res) => redirect(res, 303, 'https://elsewhere.example/result/1'),
  '/temporary': (res) => redirect(res, 307, '/retry-here?x=1'),
};

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function compressed(res: ServerResponse, coding: string, bytes: Buffer): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': coding });
  res.end(bytes);
}

function redirect(res: ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location, 'content-type': 'text/plain' });
  res.end('moved elsewhere');
}

let server: Served;
beforeAll(async () => {
  server = await serve((req, res) => {
    const answer = ANSWERS[req.url ?? ''];
    if (answer === undefined) json(res, 404, { error: 'no such path' });
    else answer(res);
  });
});
afterAll(() => server.close());

/** Node's fetch behind a wrapper: the fetch transport then asks for `manual` and shows a 3xx as it came. */
const viaFetch = defaultTransport(() => (input, init) => fetch(input, init));
const viaNodeHttp = nodeHttpTransport();

interface Exchange {
  method: string;
  path: string;
  body?: StoredBody;
  headers?: Record<string, string>;
  maxResponseBytes?: number;
}

/** Everything an attempt reads of a transport's result, as plain data. */
async function observe(transport: Transport, exchange: Exchange) {
  const controller = new AbortController();
  let result: TransportResult;
  try {
    result = await transport(
      {
        method: exchange.method,
        url: `${server.url}${exchange.path}`,
        headers: exchange.headers ?? {},
        body: exchange.body,
      },
      { signal: controller.signal, timeoutMs: 10_000, maxResponseBytes: exchange.maxResponseBytes ?? 1_048_576 },
    );
  } finally {
    // As the attempt does once it is over.
    controller.abort('attempt over');
  }
  const { observation } = result;
  // Headers that name the moment or the connection, not the answer: undici closes the connection after
  // a HEAD (`connection: close`, a guard of its own against pipelining), node:http keeps it.
  const { date, connection, 'keep-alive': keepAlive, ...headers } = result.headers;
  return {
    kind: observation.kind,
    status: 'status' in observation ? observation.status : undefined,
    location: 'location' in observation ? observation.location : undefined,
    truncatedAt: observation.kind === 'response' ? observation.bodyTruncatedAtBytes : undefined,
    text: observation.kind === 'response' ? observation.text : undefined,
    joined: observation.kind === 'response' ? [observation.header('X-Trace'), observation.header('set-cookie')] : [],
    headers,
    hasDate: date !== undefined || observation.kind === 'redirect',
    bytes: result.bytes === undefined ? undefined : Array.from(result.bytes),
  };
}

/** What the server received of the last request: its headers by lower-case name (repeats joined), and body. */
function lastReceived() {
  const last = server.received.at(-1);
  if (last === undefined) throw new Error('nothing received');
  const headers: Record<string, string> = {};
  for (let at = 0; at < last.rawHeaders.length; at += 2) {
    const name = (last.rawHeaders[at] as string).toLowerCase();
    headers[name] =
      headers[name] === undefined
        ? (last.rawHeaders[at + 1] as string)
        : `${headers[name]}, ${last.rawHeaders[at + 1]}`;
  }
  // The connection's, not the request's (see `observe`).
  delete headers.connection;
  return { method: last.method, path: last.path, headers, body: Array.from(last.body) };
}

const EXCHANGES: [string, Exchange][] = [
  [
    '201 JSON to a POST with a JSON body',
    {
      method: 'POST',
      path: '/created',
      body: { encoding: 'json', text: '{"amount":4800}' },
      headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k-1' },
    },
  ],
  [
    '422 JSON',
    {
      method: 'POST',
      path: '/refused',
      body: { encoding: 'json', text: '{"amount":1}' },
      headers: { 'content-type': 'application/json' },
    },
  ],
  [
    '503 JSON with Retry-After',
    { method: 'PUT', path: '/unavailable', body: { encoding: 'text', text: 'plain text, é' } },
  ],
  ['204 to a DELETE without a body', { method: 'DELETE', path: '/empty' }],
  ['HEAD', { method: 'HEAD', path: '/created' }],
  ['a POST without a body', { method: 'POST', path: '/created' }],
  ['binary body both ways', { method: 'POST', path: '/binary', body: { encoding: 'base64', data: 'AAEC/v+ACg0=' } }],
  ['a body over maxResponseBytes', { method: 'GET', path: '/large', maxResponseBytes: 1_000 }],
  ['gzip', { method: 'GET', path: '/gzip' }],
  ['deflate (zlib)', { method: 'GET', path: '/deflate' }],
  ['deflate (raw)', { method: 'GET', path: '/raw-deflate' }],
  ['br', { method: 'GET', path: '/br' }],
  ['gzip, br', { method: 'GET', path: '/two-codings' }],
  ['a coding fetch does not know', { method: 'GET', path: '/unknown-coding' }],
  ['one coding of two fetch does not know', { method: 'GET', path: '/partly-unknown' }],
  ['a gzip body decoded past maxResponseBytes', { method: 'GET', path: '/large-gzip', maxResponseBytes: 5_000 }],
  ['repeated headers and cookies', { method: 'GET', path: '/repeated' }],
  ['a caller accept-encoding of its own', { method: 'GET', path: '/gzip', headers: { 'Accept-Encoding': 'gzip' } }],
  ['301 with Location', { method: 'POST', path: '/moved', body: { encoding: 'json', text: '{}' } }],
  ['303 with Location', { method: 'POST', path: '/see-other', body: { encoding: 'json', text: '{}' } }],
  ['307 with Location', { method: 'PATCH', path: '/temporary', body: { encoding: 'json', text: '{}' } }],
];

describe('node:http transport: parity with the fetch transport', () => {
  it.each(EXCHANGES)('%s', async (_name, exchange) => {
    const byFetch = await observe(viaFetch, exchange);
    const sentByFetch = lastReceived();
    const byNodeHttp = await observe(viaNodeHttp, exchange);
    const sentByNodeHttp = lastReceived();
    expect(byNodeHttp).toEqual(byFetch);
    expect(sentByNodeHttp).toEqual(sentByFetch);
  });

  it('more than five codings: both fail in flight, may have been sent', async () => {
    const request = { method: 'POST', url: `${server.url}/six-codings`, headers: {}, body: undefined };
    const context = () => ({ signal: new AbortController().signal, timeoutMs: 10_000, maxResponseBytes: 1_000 });
    await expect(viaFetch(request, context())).rejects.toThrow();
    await expect(viaNodeHttp(request, context())).rejects.toThrow(/too many content-encodings/);
  });

  it('shows what it should (the comparison above is not between two empty results)', async () => {
    expect(await observe(viaNodeHttp, EXCHANGES[0]?.[1] as Exchange)).toMatchObject({
      kind: 'response',
      status: 201,
      text: '{"id":"pay_1","amount":4800}',
      headers: { 'content-type': 'application/json' },
    });
    expect(lastReceived()).toMatchObject({
      headers: { 'idempotency-key': 'k-1', 'content-length': '15', accept: '*/*', 'accept-encoding': 'gzip, deflate' },
    });
    expect(await observe(viaNodeHttp, { method: 'GET', path: '/gzip' })).toMatchObject({ text: '{"zipped":true}' });
    expect(await observe(viaNodeHttp, { method: 'GET', path: '/large', maxResponseBytes: 1_000 })).toMatchObject({
      truncatedAt: 1_000,
      text: 'a'.repeat(1_000),
    });
    expect(await observe(viaNodeHttp, { method: 'GET', path: '/repeated' })).toMatchObject({
      joined: ['a, b, c', 'one=1, two=2'],
      headers: { 'x-trace': 'a, b, c', 'set-cookie': 'two=2', vary: 'accept, accept-encoding' },
    });
    expect(await observe(viaNodeHttp, { method: 'POST', path: '/see-other' })).toMatchObject({
      kind: 'redirect',
      status: 303,
      location: 'https://elsewhere.example/result/1',
    });
  });
});
