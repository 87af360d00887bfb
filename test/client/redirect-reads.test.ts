/**
 * A safe read sent without a key follows redirects as fetch does (its own
 * limit of 20): the answer is the final one. A keyed request keeps the rule
 * of redirects.test.ts: a 3xx is its answer, never followed, and the stop
 * says it was redirected (not "rejected") and may have been applied.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClientOptions, createClient, memoryStore, OperationError } from '../../src/index.js';

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const part of opened.splice(0).reverse()) await part.close();
});

/** `/from` answers `status` to `/to`, `/loop` to itself; `/to` answers 200. Counts requests by path. */
async function redirecting(status: number): Promise<{ url: string; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    req.resume();
    if (path === '/to') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ at: 'to' }));
      return;
    }
    res.writeHead(status, { location: path === '/loop' ? '/loop' : '/to' });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

function client(baseUrl: string, more: Partial<ClientOptions> = {}) {
  const c = createClient({ baseUrl, store: memoryStore(), ...more });
  opened.push(c);
  return c;
}

describe.each([301, 302, 307, 308])('%d', (status) => {
  it('a keyless GET follows it and resolves with the final answer', async () => {
    const server = await redirecting(status);
    const result = await client(server.url).send({ method: 'GET', url: '/from' });
    expect(result).toMatchObject({ status: 200, data: { at: 'to' } });
    expect([server.hits.get('/from'), server.hits.get('/to')]).toEqual([1, 1]);
  });

  it('a keyed write is not followed and ends unknown, saying it was redirected', async () => {
    const server = await redirecting(status);
    const error = await client(server.url)
      .send({ method: 'POST', url: '/from', key: `w${status}`, json: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ state: 'unknown', mayHaveTakenEffect: true });
    expect((error as Error).message).toMatch(/redirected/);
    expect((error as Error).message).not.toMatch(/rejected/);
    expect(server.hits.get('/to')).toBeUndefined();
  });
});

it('a GET that sends a key is keyed: its redirect is not followed', async () => {
  const server = await redirecting(307);
  const keyed = client(server.url, { policy: { sendKey: true } });
  const error = await keyed.send({ method: 'GET', url: '/from', key: 'g' }).catch((e: unknown) => e);
  expect(error).toMatchObject({ state: 'unknown' });
  expect(server.hits.get('/to')).toBeUndefined();
});

it("a keyless GET stops at fetch's redirect limit (20), as fetch does", async () => {
  const server = await redirecting(302);
  const error = await client(server.url, { policy: { maxAttempts: 1 } })
    .send({ method: 'GET', url: '/loop' })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OperationError);
  expect(server.hits.get('/loop')).toBe(21);
});
