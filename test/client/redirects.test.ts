/**
 * A keyed write never follows a redirect: the key and the body would go to
 * whatever origin the server names, and a failure on a later hop would hide
 * that the first hop may have applied the request. A 3xx is final, its
 * effect unknown: the operation ends `unknown` (never `failed`) after one
 * request, with its status and Location in the detail where the `fetch`
 * shows them (the fake runtime's wrapper does; Node's own does not).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, memoryStore, OperationError } from '../../src/index.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { freePort } from '../helpers/free-port.js';
import { closeAll, harness } from '../helpers/harness.js';

let elsewhere: ReferenceServer | undefined;
/** Clients and servers a test opened on its own (not through the harness), closed after it. */
const opened: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  await closeAll();
  await elsewhere?.close();
  elsewhere = undefined;
  for (const part of opened.splice(0).reverse()) await part.close();
});

/** A client on `server` with Node's own fetch (no `fetch` option) unless `fetch` is given. */
function plainClient(server: ReferenceServer, fetch?: typeof globalThis.fetch) {
  const client = createClient({ baseUrl: server.url, store: memoryStore(), ...(fetch === undefined ? {} : { fetch }) });
  opened.push(server, client);
  return client;
}

describe('redirects are observations, never followed', () => {
  it.each([301, 302, 303, 307, 308])(
    '%d to another origin: one request, nothing there, ends unknown',
    async (status) => {
      elsewhere = await startReferenceServer({ requireKey: false });
      const location = `${elsewhere.url}/steal`;
      const h = await harness(
        {},
        { handle: () => ({ status, body: { moved: true }, headers: { Location: location } }) },
      );
      const error = await h.rt
        .run(h.client.send({ method: 'POST', url: '/payments', key: `r${status}`, json: { amount: 1 } }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperationError);
      expect(error).toMatchObject({ state: 'unknown', reason: 'permanent', status, key: `r${status}` });
      expect(elsewhere.ledger.requests).toHaveLength(0);
      expect(h.server.ledger.requestsFor(`r${status}`)).toHaveLength(1);
      const record = await h.client.get(`r${status}`);
      expect(record?.attempts).toHaveLength(1);
      expect(record?.attempts[0]).toMatchObject({ class: 'permanent', sent: 'definitely', effect: 'unknown', status });
      expect(record?.attempts[0]?.error).toContain(location);
      expect(record?.failure?.message).toContain(location);
      // "May have taken effect" is sticky: nothing suggests sending it again as new work.
      expect((error as OperationError).remediation).toMatch(/reconcile/i);
    },
  );

  it('a refused second hop no longer reads as "not sent" (it used to end failed after the first hop applied it)', async () => {
    const dead = `http://127.0.0.1:${await freePort()}/gone`;
    const h = await harness(
      { policy: { deadlineMs: 3_000 } },
      { handle: () => ({ status: 307, body: {}, headers: { Location: dead } }) },
    );
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'hop', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'unknown' });
    expect(h.server.ledger.effectCount('hop')).toBe(1);
    expect(h.server.ledger.requestsFor('hop')).toHaveLength(1);
    const record = await h.client.get('hop');
    expect(record?.attempts.map((a) => a.sent)).toEqual(['definitely']);
  });

  it('a 3xx after an earlier not-applied answer still ends unknown', async () => {
    const h = await harness({}, { handle: () => ({ status: 302, body: {}, headers: { Location: '/elsewhere' } }) });
    h.server.script({ kind: 'status', status: 503 });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'late', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'unknown', status: 302 });
    expect(h.server.ledger.requestsFor('late')).toHaveLength(2);
  });
});

/**
 * With Node's own `fetch` (no `fetch` option, the global untouched), oncely
 * asks for `redirect: 'error'`, which spares Node's fetch a clone of every
 * request (see flow/transport/transport.ts). A redirect then arrives as undici's
 * "unexpected redirect" and must still read as an answer that may have been
 * applied: one request, nothing sent elsewhere, `unknown`. The status and
 * Location are hidden, as in a browser. The suite runs this file on Node 20
 * and 22, which holds both to the rejection's shape.
 */
describe("redirects through Node's own fetch", () => {
  it.each([301, 302, 303, 307, 308])(
    '%d: one request, nothing elsewhere, ends unknown with the redirect hidden',
    async (status) => {
      elsewhere = await startReferenceServer({ requireKey: false });
      const server = await startReferenceServer({
        handle: () => ({ status, body: {}, headers: { Location: `${elsewhere?.url}/steal` } }),
      });
      const client = plainClient(server);
      const error = await client
        .send({ method: 'POST', url: '/payments', key: `n${status}`, json: { amount: 1 } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperationError);
      expect(error).toMatchObject({ state: 'unknown', reason: 'permanent', key: `n${status}` });
      // Hidden, as Node's fetch refused the redirect: a status here would mean the slower `manual` path ran.
      expect((error as OperationError).status).toBeUndefined();
      expect((error as OperationError).remediation).toMatch(/reconcile/i);
      expect(server.ledger.requestsFor(`n${status}`)).toHaveLength(1);
      expect(elsewhere.ledger.requests).toHaveLength(0);
      const record = await client.get(`n${status}`);
      expect(record?.attempts).toHaveLength(1);
      expect(record?.attempts[0]).toMatchObject({ class: 'permanent', sent: 'definitely', effect: 'unknown' });
      expect(record?.attempts[0]?.error).toContain('hidden by the fetch in use');
    },
  );

  it('a redirect whose body never ends: its connection is let go when the operation ends', async () => {
    // Node's fetch refusing a redirect leaves no response to cancel; without an abort it holds the connection open.
    let requests = 0;
    let resolveClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => {
      resolveClosed = resolve;
    });
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      res.writeHead(302, { location: '/elsewhere', 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16_384, 120);
      const pump = setInterval(() => res.write(chunk), 5);
      res.on('close', () => {
        clearInterval(pump);
        resolveClosed();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, store: memoryStore() });
    try {
      const error = await client
        .send({ method: 'POST', url: '/payments', key: 'endless', json: {} })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ state: 'unknown', reason: 'permanent' });
      expect(requests).toBe(1);
      // Bounded by the test's timeout: without the abort, the server never sees the connection close.
      await closed;
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a 300 is no redirect to the fetch algorithm: it arrives with its status and Location', async () => {
    const server = await startReferenceServer({
      handle: () => ({ status: 300, body: {}, headers: { Location: '/choices' } }),
    });
    const client = plainClient(server);
    const error = await client
      .send({ method: 'POST', url: '/payments', key: 'c300', json: {} })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'unknown', status: 300 });
    expect((await client.get('c300'))?.attempts[0]?.error).toContain('/choices');
    expect(server.ledger.requestsFor('c300')).toHaveLength(1);
  });

  it("a fetch passed in is asked for manual redirects (only Node's own is known to refuse them readably)", async () => {
    const modes: (RequestRedirect | undefined)[] = [];
    const client = plainClient(await startReferenceServer(), (input, init) => {
      modes.push(init?.redirect);
      return globalThis.fetch(input, init);
    });
    await client.send({ method: 'POST', url: '/payments', key: 'passed', json: {} });
    expect(modes).toEqual(['manual']);
  });
});
