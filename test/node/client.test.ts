/**
 * Which transport an `oncely/node` client sends with: node:http when no
 * `fetch` was passed, Node's own fetch is still the global one, and no
 * redirect is to be followed; else fetch, as the universal client does.
 * And end to end over node:http: the key header on every attempt, one
 * effect through a lost response. Virtual time: the retry delays never
 * wait on the wall clock.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient as createUniversalClient } from '../../src/index.js';
import { createClient, memoryStore, type OncelyClient } from '../../src/node.js';
import { createFakeRuntime, type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { type Served, serve, watchClients } from './servers.js';

const opened: { close(): Promise<unknown> }[] = [];
let watch: ReturnType<typeof watchClients> | undefined;
afterEach(async () => {
  watch?.stop();
  watch = undefined;
  vi.unstubAllGlobals();
  for (const part of opened.splice(0).reverse()) await part.close();
});

async function reference(): Promise<{ rt: ReturnType<typeof createFakeRuntime>; server: ReferenceServer }> {
  const rt = createFakeRuntime({ seed: 7 });
  const server = await startReferenceServer({ runtime: rt });
  opened.push(server);
  return { rt, server };
}

function track<T extends OncelyClient>(client: T): T {
  opened.push(client);
  return client;
}

describe('oncely/node sends with node:http', () => {
  it('end to end: a POST with its key, the response lost once, one effect, the same key on the retry', async () => {
    const { rt, server } = await reference();
    const client = track(createClient({ baseUrl: server.url, runtime: rt, store: memoryStore({ now: rt.now }) }));
    server.script({ kind: 'reset-after-commit' });
    watch = watchClients();
    const result = await rt.run(
      client.send({ method: 'POST', url: '/payments', key: 'pay-1', json: { amount: 4800 } }),
    );
    expect(result.status).toBe(201);
    expect(server.ledger.effectCount('pay-1')).toBe(1);
    expect(server.ledger.requestsFor('pay-1').map((r) => r.key)).toEqual(['pay-1', 'pay-1']);
    expect((await client.get('pay-1'))?.attempts.map((a) => a.sent)).toEqual(['maybe', 'definitely']);
    expect(watch.nodeHttp()).toBe(2);
    expect(watch.undici()).toBe(0);
  });

  it('a global fetch replaced after oncely loaded (msw, a stub) sees every request', async () => {
    const { rt, server } = await reference();
    const client = track(createClient({ baseUrl: server.url, runtime: rt, store: memoryStore({ now: rt.now }) }));
    const real = globalThis.fetch;
    const replaced = vi.fn((input: Parameters<typeof fetch>[0], init?: RequestInit) => real(input, init));
    vi.stubGlobal('fetch', replaced);
    server.script({ kind: 'status', status: 503 });
    watch = watchClients();
    const result = await rt.run(client.send({ method: 'POST', url: '/payments', key: 'pay-2', json: { amount: 1 } }));
    expect(result.status).toBe(201);
    expect(replaced).toHaveBeenCalledTimes(2);
    expect(watch.nodeHttp()).toBe(0);
  });

  it('a `fetch` option is used for every request', async () => {
    const { rt, server } = await reference();
    const given = vi.fn((input: Parameters<typeof fetch>[0], init?: RequestInit) => fetch(input, init));
    const client = track(createClient({ baseUrl: server.url, runtime: rt, fetch: given }));
    watch = watchClients();
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'pay-3', json: { amount: 1 } }));
    expect(given).toHaveBeenCalledTimes(1);
    expect(watch.nodeHttp()).toBe(0);
  });

  it('the universal `oncely` client keeps fetch', async () => {
    const { rt, server } = await reference();
    const client = track(createUniversalClient({ baseUrl: server.url, runtime: rt }));
    watch = watchClients();
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'pay-4', json: { amount: 1 } }));
    expect(watch.nodeHttp()).toBe(0);
    expect(watch.undici()).toBe(1);
  });

  it('a keyless read that follows redirects goes to fetch, which follows them; a keyed read does not', async () => {
    const served: Served = await serve((req, res) => {
      if (req.url === '/old') {
        res.writeHead(302, { location: '/new' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"here":true}');
    });
    opened.push(served);
    const client = track(createClient({ baseUrl: served.url, runtime: createFakeRuntime() }));
    watch = watchClients();
    const read = await client.send<{ here: boolean }>({ method: 'GET', url: '/old' });
    expect(read.data).toEqual({ here: true });
    expect(watch.nodeHttp()).toBe(0);
    expect(served.received.map((r) => r.path)).toEqual(['/old', '/new']);
    // A keyed GET never follows: node:http, and the 302 is its answer.
    const keyed = track(createClient({ baseUrl: served.url, runtime: createFakeRuntime(), policy: { sendKey: true } }));
    await expect(keyed.send({ method: 'GET', url: '/old', key: 'read-1' })).rejects.toMatchObject({ status: 302 });
    expect(watch.nodeHttp()).toBe(1);
    expect(served.received.map((r) => r.path)).toEqual(['/old', '/new', '/old']);
  });
});
