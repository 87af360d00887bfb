/**
 * Issue 14, item 3: reads do not fill the store, and the store cleans
 * itself. Real file store, real reference server, fake time.
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ClientOptions,
  createClient,
  InvalidOptionsError,
  memoryStore,
  type OncelyClient,
} from '../../src/node.js';
import { createFakeRuntime, type FakeRuntime, type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

let server: ReferenceServer | undefined;
const clients: OncelyClient[] = [];
/** Closed after their clients (a client leaves open a store it was given), before their directories go. */
const stores: ReturnType<typeof fileStore>[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await server?.close();
  server = undefined;
  removeTempDirs();
});

interface Setup {
  rt: FakeRuntime;
  server: ReferenceServer;
  client: OncelyClient;
  store: ReturnType<typeof fileStore>;
  /** Record files in the store directory (the store's own bookkeeping left out). */
  recordFiles(): string[];
}

async function setup(options: Partial<ClientOptions> = {}): Promise<Setup> {
  const rt = createFakeRuntime();
  server = await startReferenceServer({ runtime: rt });
  const dir = tempDir();
  const store = fileStore({ dir, runtime: rt });
  stores.push(store);
  const client = createClient({ store, baseUrl: server.url, runtime: rt, fetch: rt.fetch, ...options });
  clients.push(client);
  const recordFiles = () => fs.readdirSync(dir).filter((name) => name.endsWith('.json'));
  return { rt, server, client, store, recordFiles };
}

describe('requests that send no key are not written ahead', () => {
  it('50 GETs write no record file; each is answered', async () => {
    const { rt, client, store, recordFiles, server } = await setup();
    const keys = Array.from({ length: 50 }, (_, i) => `read-${i}`);
    const results = await rt.run(Promise.all(keys.map((key, i) => client.send({ url: `/items/${i}`, key }))));
    expect(results.map((r) => r.status)).toEqual(keys.map(() => 200));
    expect(server.ledger.requests).toHaveLength(50);
    expect(recordFiles()).toEqual([]);
    for (const key of keys) expect(fs.existsSync(store.pathOf(key))).toBe(false);
    // Forgotten once answered: nothing to list, nothing kept in memory either.
    expect(await client.list()).toEqual([]);
    expect(await client.get('read-0')).toBeUndefined();
  });

  it('a write (it sends a key) is written ahead as before', async () => {
    const { rt, client, store, recordFiles } = await setup();
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'pay-1', json: { amount: 1 } }));
    expect(fs.existsSync(store.pathOf('pay-1'))).toBe(true);
    expect(recordFiles()).toEqual(['pay-1.json']);
  });

  it('sendKey: false makes a write keyless, and so memory-only too', async () => {
    const { rt, client, store, server } = await setup({ endpoints: { 'PUT /events/*': { sendKey: false } } });
    await rt.run(client.send({ method: 'PUT', url: '/events/1', key: 'ev-1', json: { seen: true } }));
    expect(server.ledger.requests).toMatchObject([{ method: 'PUT', key: undefined, outcome: 'effect' }]);
    expect(fs.existsSync(store.pathOf('ev-1'))).toBe(false);
  });

  it('persist: true on the rule, or on the request, writes it ahead', async () => {
    const { rt, client, store } = await setup({ endpoints: { 'GET /exports/*': { persist: true } } });
    await rt.run(client.send({ url: '/exports/1', key: 'export-1' }));
    await rt.run(client.send({ url: '/items/1', key: 'item-1', persist: true }));
    await rt.run(client.send({ url: '/items/2', key: 'item-2' }));
    expect(fs.existsSync(store.pathOf('export-1'))).toBe(true);
    expect(fs.existsSync(store.pathOf('item-1'))).toBe(true);
    expect(fs.existsSync(store.pathOf('item-2'))).toBe(false);
    expect(await client.get('export-1')).toMatchObject({ state: 'succeeded', request: { method: 'GET' } });
    expect(client.policyFor('GET', '/exports/9').persist).toBe(true);
  });

  it('a second send of the same key joins the one running: one operation, one answer for both', async () => {
    const { rt, client, server, recordFiles } = await setup();
    server.script({ kind: 'status', status: 503, retryAfter: 1 });
    let second: Promise<unknown> | undefined;
    let whileRunning: Promise<unknown> | undefined;
    client.on('retry:scheduled', () => {
      second ??= client.send({ url: '/items/7', key: 'same' });
      whileRunning ??= client.get('same');
    });
    const first = await rt.run(client.send({ url: '/items/7', key: 'same' }));
    // While it ran (waiting for its retry), the record was found in memory.
    expect(await whileRunning).toMatchObject({ key: 'same', state: 'pending' });
    expect(await rt.run(second ?? Promise.reject(new Error('no second send')))).toEqual(first);
    // The 503 and the retry: the second send sent nothing of its own.
    expect(server.ledger.requests.map((r) => r.status)).toEqual([503, 200]);
    expect(recordFiles()).toEqual([]);
    expect(await client.get('same')).toBeUndefined();
  });

  it('closed before it settled: the error says nothing will resume it (it was not stored)', async () => {
    const { rt, client, recordFiles, server } = await setup();
    server.script({ kind: 'status', status: 503, retryAfter: 5 });
    client.on('retry:scheduled', () => void client.close());
    const error = await rt.run(client.send({ url: '/items/1', key: 'gone' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'OperationError', key: 'gone', state: 'pending' });
    expect((error as Error).message).toMatch(/kept in memory only .* nothing will resume it/);
    expect(recordFiles()).toEqual([]);
  });

  it('a refused persist value is an InvalidRequestError naming `persist`', async () => {
    const { client } = await setup();
    await expect(client.send({ url: '/items/1', persist: 'yes' as unknown as boolean })).rejects.toMatchObject({
      field: 'persist',
    });
  });
});

describe('the client sweeps expired records by itself', () => {
  const retained = { policy: { retainMs: 1_000 }, sweepIntervalMs: 60_000 };

  it('on first use, and then at most every sweepIntervalMs, without sweep() being called', async () => {
    const { rt, client, store } = await setup(retained);
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'old', json: { amount: 1 } }));
    expect(fs.existsSync(store.pathOf('old'))).toBe(true);

    // Past its retention, but the last sweep (the first send's) is not an interval old: kept.
    await rt.advance(2_000);
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'newer', json: { amount: 2 } }));
    expect(fs.existsSync(store.pathOf('old'))).toBe(true);

    // An interval after the last sweep, the next use sweeps it.
    await rt.advance(60_000);
    await rt.run(client.send({ url: '/items/1' }));
    await client.close();
    expect(fs.existsSync(store.pathOf('old'))).toBe(false);
    expect(fs.existsSync(store.pathOf('newer'))).toBe(false);
  });

  it('a new client sweeps on its first use (start-up)', async () => {
    const { rt, client, store, server } = await setup(retained);
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'left', json: { amount: 1 } }));
    await client.close();
    await rt.advance(5_000);
    const next = createClient({ store, baseUrl: server.url, runtime: rt, fetch: rt.fetch, ...retained });
    clients.push(next);
    expect(fs.existsSync(store.pathOf('left'))).toBe(true);
    await rt.run(next.send({ url: '/items/1' }));
    await next.close();
    expect(fs.existsSync(store.pathOf('left'))).toBe(false);
  });

  it('open operations and records within their retention are never swept', async () => {
    const { rt, client, store } = await setup({ sweepIntervalMs: 1 });
    await rt.run(client.send({ method: 'POST', url: '/payments', key: 'kept', json: { amount: 1 } }));
    await rt.advance(10_000);
    await rt.run(client.send({ url: '/items/1' }));
    await client.close();
    expect(fs.existsSync(store.pathOf('kept'))).toBe(true);
  });

  it("a failing sweep is an 'error' event, never the caller's rejection", async () => {
    const rt = createFakeRuntime();
    server = await startReferenceServer({ runtime: rt });
    const inner = memoryStore({ now: rt.now });
    const store = { ...inner, list: () => Promise.reject(new Error('disk gone')) };
    const client = createClient({ store, baseUrl: server.url, runtime: rt, fetch: rt.fetch });
    clients.push(client);
    const errors: Array<{ error: unknown; event: string }> = [];
    client.on('error', (e) => errors.push(e));
    const result = await rt.run(client.send({ method: 'POST', url: '/payments', key: 'p', json: {} }));
    await client.close();
    expect(result.status).toBe(201);
    expect(errors).toEqual([{ error: new Error('disk gone'), event: 'sweep' }]);
  });

  it.each([0, -1, Number.NaN, '600000'])('sweepIntervalMs %o is refused at construction', (value) => {
    expect(() => createClient({ sweepIntervalMs: value as number })).toThrow(InvalidOptionsError);
    expect(() => createClient({ sweepIntervalMs: value as number })).toThrow(/sweepIntervalMs/);
  });
});
