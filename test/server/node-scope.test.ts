/**
 * `nodeScopeOf`: the middleware takes the caller from Node's request, where
 * an authentication middleware before it left it (`req.user`), which a
 * Fetch `Request` would not carry. One user's key replays for that user
 * only; another user's same key is another operation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotency, memoryIdempotencyStore } from '../../src/server.js';
import { serveChain, type TestServer } from '../helpers/http-server.js';
import { post } from './fixture.js';

type AuthenticatedRequest = IncomingMessage & { user?: { id: string } };

let server: TestServer | undefined;
afterEach(() => server?.close());

describe('nodeScopeOf', () => {
  it('scopes keys by what the auth middleware left on req, building no Request', async () => {
    let effects = 0;
    const guard = idempotency({
      store: memoryIdempotencyStore(),
      nodeScopeOf: (req) => (req as AuthenticatedRequest).user?.id ?? 'anonymous',
      routes: { 'POST /payments': {} },
    });
    const built: Request[] = [];
    const OriginalRequest = globalThis.Request;
    const authenticate = (req: AuthenticatedRequest, _res: ServerResponse, next: () => void) => {
      req.user = { id: String(req.headers['x-account']) };
      next();
    };
    const pay = (_req: IncomingMessage, res: ServerResponse) => {
      effects += 1;
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: `pay_${effects}` }));
    };
    globalThis.Request = class extends OriginalRequest {
      constructor(...args: ConstructorParameters<typeof Request>) {
        super(...args);
        built.push(this);
      }
    };
    try {
      server = await serveChain(authenticate as never, guard.middleware as never, pay);
      const alice = await post(server, '/payments', { key: 'k1', account: 'alice' });
      const again = await post(server, '/payments', { key: 'k1', account: 'alice' });
      const bob = await post(server, '/payments', { key: 'k1', account: 'bob' });
      expect([alice.status, again.status, bob.status]).toEqual([201, 201, 201]);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(alice.text);
      expect(bob.headers.get('idempotent-replayed')).toBeNull();
      expect(effects).toBe(2);
      expect(built.filter((r) => r.url.startsWith(server?.url ?? '-'))).toEqual([]);
    } finally {
      globalThis.Request = OriginalRequest;
    }
  });
});
