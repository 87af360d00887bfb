/** The server contract on the memory store (injected clock), both styles; and the middleware behind a body parser. */
import { describe, expect, it } from 'vitest';
import { idempotency, memoryIdempotencyStore } from '../../src/server.js';
import { serveChain } from '../helpers/http-server.js';
import { contractSuite } from './contract-suite.js';
import { post, startApp } from './fixture.js';

contractSuite('memory store', (style) => {
  const clock = { now: 1_000_000 };
  return startApp(style, {
    store: memoryIdempotencyStore({ now: () => clock.now }),
    advance: async (ms) => {
      clock.now += ms;
    },
  });
});

describe('Connect middleware after a body parser', () => {
  it('fingerprints what the parser left (the stream is spent): replay, and 422 for another body', async () => {
    const guard = idempotency({
      store: memoryIdempotencyStore(),
      scopeOf: () => 'a',
      routes: { 'POST /payments': {} },
    });
    let effects = 0;
    const server = await serveChain(
      // A JSON parser ahead of the guard, as express.json() would be.
      (req, _res, next) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString()), _body: true });
          next();
        });
      },
      guard.middleware as never,
      (req, res) => {
        effects += 1;
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ n: effects, body: (req as { body?: unknown }).body }));
      },
    );
    try {
      const first = await post(server, '/payments', { key: 'k', body: { a: 1, b: 2 } });
      const again = await post(server, '/payments', { key: 'k', body: '{"b":2,"a":1}' });
      const other = await post(server, '/payments', { key: 'k', body: { a: 9 } });
      expect(first.json).toEqual({ n: 1, body: { a: 1, b: 2 } });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(other.status).toBe(422);
      expect(effects).toBe(1);
    } finally {
      await server.close();
    }
  });
});
