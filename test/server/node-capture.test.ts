/**
 * The Node middleware's capture of `res`, written the many ways an
 * application writes a response: in chunks (strings and bytes, with
 * callbacks), a buffer reused after `write`, `writeHead` with a header
 * array, `setHeader` after `writeHead`, several values of one header. The
 * client gets the exact bytes, and a replay gives them back with the
 * allow-listed headers only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotency, memoryIdempotencyStore } from '../../src/server.js';
import { type Middleware, serveChain, type TestServer } from '../helpers/http-server.js';
import { post } from './fixture.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

const guarded = (app: (req: IncomingMessage, res: ServerResponse) => void, replayHeaders: string[] = []) => {
  const guard = idempotency({
    store: memoryIdempotencyStore(),
    nodeScopeOf: () => 'alice',
    routes: { 'POST /payments': {} },
    replayHeaders,
  });
  return serveChain(guard.middleware as Middleware, app as Middleware);
};

describe('the Node middleware captures every way of writing a response', () => {
  it('many chunks, strings and bytes, a buffer reused after write, callbacks called: exact bytes, replayed the same', async () => {
    let effects = 0;
    const callbacks: string[] = [];
    server = await guarded((_req, res) => {
      effects += 1;
      res.statusCode = 201;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      const reused = Buffer.from('AB');
      res.write(reused, () => callbacks.push('bytes'));
      // The application's own buffer, changed once written: what was written is what counts.
      reused.fill(0x5a);
      res.write('€ 5', 'utf8', () => callbacks.push('text'));
      res.write(new Uint8Array([0x43, 0x44]));
      res.end('!', () => callbacks.push('end'));
    });
    const first = await post(server, '/payments', { key: 'k1' });
    const again = await post(server, '/payments', { key: 'k1' });
    expect([first.status, first.text]).toEqual([201, 'AB€ 5CD!']);
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([201, 'AB€ 5CD!', 'true']);
    expect(again.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    // `end`'s callback runs once the response went out, as Node's does.
    expect(callbacks).toEqual(['bytes', 'text', 'end']);
    expect(effects).toBe(1);
  });

  it('writeHead with a header array, setHeader after it, one header with several values', async () => {
    server = await guarded(
      (_req, res) => {
        res.writeHead(201, ['Content-Type', 'application/json', 'X-Tags', 'a']);
        // Nothing has reached the socket under the capture: a header set now still goes out.
        res.setHeader('Location', '/payments/1');
        res.setHeader('X-Tags', ['a', 'b']);
        res.setHeader('X-Not-Replayed', '1');
        res.end('{"id":"pay_1"}');
      },
      ['X-Tags'],
    );
    const first = await post(server, '/payments', { key: 'k1' });
    const again = await post(server, '/payments', { key: 'k1' });
    expect([first.status, first.headers.get('location'), first.headers.get('x-not-replayed')]).toEqual([
      201,
      '/payments/1',
      '1',
    ]);
    expect([
      again.status,
      again.text,
      again.headers.get('content-type'),
      again.headers.get('location'),
      again.headers.get('x-tags'),
      again.headers.get('x-not-replayed'),
    ]).toEqual([201, '{"id":"pay_1"}', 'application/json', '/payments/1', 'a, b', null]);
  });

  it('a body larger than the pool of small buffers, written in pieces, comes back whole', async () => {
    const piece = 'x'.repeat(3000);
    server = await guarded((_req, res) => {
      res.writeHead(201, { 'Content-Type': 'text/plain' });
      for (let i = 0; i < 10; i++) res.write(`${i}${piece}`);
      res.end();
    });
    const first = await post(server, '/payments', { key: 'k1' });
    const again = await post(server, '/payments', { key: 'k1' });
    const expected = Array.from({ length: 10 }, (_, i) => `${i}${piece}`).join('');
    expect([first.text.length, first.text === expected]).toEqual([expected.length, true]);
    expect([again.text === expected, again.headers.get('idempotent-replayed')]).toEqual([true, 'true']);
  });
});
