import { afterEach, describe, expect, it } from 'vitest';
import {
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from '../../src/testing/reference-server.js';

const servers: ReferenceServer[] = [];

/** Every test gets its own server; afterEach closes them even when a test fails. */
async function start(options?: ReferenceServerOptions): Promise<ReferenceServer> {
  const server = await startReferenceServer(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface PostOptions {
  key?: string;
  method?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  rawBody?: string;
}

/** A JSON write with an optional key, the way the SDK's own transport sends it. */
function send(server: ReferenceServer, path: string, body: unknown, options: PostOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
  if (options.key !== undefined) headers['Idempotency-Key'] = options.key;
  const init: RequestInit = {
    method: options.method ?? 'POST',
    headers,
    body: options.rawBody ?? JSON.stringify(body),
  };
  if (options.signal !== undefined) init.signal = options.signal;
  return fetch(`${server.url}${path}`, init);
}

/** A fake clock: tests move time explicitly instead of sleeping. */
function fakeClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

/** A promise the test resolves by hand: the server's effect waits on it, so "still in progress" is a state, not a race. */
function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** One turn of the event loop: promise callbacks queued before it have run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('reference server: the idempotency contract', () => {
  it('listens on 127.0.0.1 with an ephemeral port', async () => {
    const server = await start();
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('performs an identical request once and replays the stored response', async () => {
    const server = await start();
    const first = await send(server, '/charges', { amount: 5 }, { key: 'k1' });
    const second = await send(server, '/charges', { amount: 5 }, { key: 'k1' });

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await first.json()).toEqual({ id: 'res_1', amount: 5 });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual({ id: 'res_1', amount: 5 });
    expect(server.ledger.effectCount('k1')).toBe(1);
    expect(server.ledger.effects.get('k1')).toBe(1);
    expect(server.ledger.requestsFor('k1').map((entry) => entry.outcome)).toEqual(['effect', 'replay']);
  });

  it('performs two concurrent identical requests exactly once', async () => {
    const server = await start();
    const responses = await Promise.all([
      send(server, '/charges', { amount: 5 }, { key: 'race' }),
      send(server, '/charges', { amount: 5 }, { key: 'race' }),
    ]);

    expect(server.ledger.effectCount('race')).toBe(1);
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses[0]).toBe(201);
    const other = responses.find((r) => r.headers.get('idempotent-replayed') === 'true' || r.status === 409);
    expect(other).toBeDefined();
  });

  it('answers 409 problem+json while the original is still in progress (ietf)', async () => {
    const effect = gate();
    const server = await start({
      handle: async (req) => {
        await effect.wait;
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    const original = send(server, '/charges', { amount: 5 }, { key: 'slow' });
    await server.waitForRequests(1);

    const duplicate = await send(server, '/charges', { amount: 5 }, { key: 'slow' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get('content-type')).toBe('application/problem+json');
    expect(await duplicate.json()).toMatchObject({
      type: 'https://example.com/errors/idempotency-in-progress',
      title: 'A request with this Idempotency-Key is still in progress',
    });
    effect.open();
    expect((await original).status).toBe(201);
    expect(server.ledger.effectCount('slow')).toBe(1);
    expect(server.ledger.maxConcurrent('slow')).toBe(2);
  });

  it('answers 409 idempotency_key_in_use while in progress (stripe)', async () => {
    const effect = gate();
    const server = await start({
      profile: 'stripe',
      handle: async (req) => {
        await effect.wait;
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    const original = send(server, '/v1/charges', { amount: 5 }, { key: 'slow' });
    await server.waitForRequests(1);

    const duplicate = await send(server, '/v1/charges', { amount: 5 }, { key: 'slow' });
    expect(duplicate.status).toBe(409);
    const body = (await duplicate.json()) as { error: Record<string, string> };
    expect(body.error.type).toBe('idempotency_error');
    expect(body.error.code).toBe('idempotency_key_in_use');
    effect.open();
    expect((await original).status).toBe(201);
  });

  it('rejects a key reused with a different payload with 422 (ietf), no effect', async () => {
    const server = await start();
    await send(server, '/charges', { amount: 5 }, { key: 'k' });
    const reused = await send(server, '/charges', { amount: 6 }, { key: 'k' });

    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toBe('application/problem+json');
    const body = (await reused.json()) as { title: string };
    expect(body.title).toMatch(/already used with a different payload/);
    expect(server.ledger.effectCount('k')).toBe(1);
    expect(server.ledger.requestsFor('k')[1]?.outcome).toBe('mismatch');
  });

  it('rejects a key reused on a different path as a mismatch too', async () => {
    const server = await start();
    await send(server, '/charges?a=1', { amount: 5 }, { key: 'k' });
    const reused = await send(server, '/charges?a=2', { amount: 5 }, { key: 'k' });
    expect(reused.status).toBe(422);
    expect(server.ledger.totalEffects()).toBe(1);
  });

  it('rejects a key reused with a different payload with 400 idempotency_error (stripe)', async () => {
    const server = await start({ profile: 'stripe' });
    await send(server, '/v1/charges', { amount: 5 }, { key: 'k' });
    const reused = await send(server, '/v1/charges', { amount: 6 }, { key: 'k' });

    expect(reused.status).toBe(400);
    expect(await reused.json()).toEqual({
      error: {
        type: 'idempotency_error',
        message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.',
      },
    });
    expect(server.ledger.effectCount('k')).toBe(1);
  });

  it('fingerprints JSON by meaning: reordered keys are the same request', async () => {
    const server = await start();
    await send(server, '/charges', undefined, { key: 'k', rawBody: '{"a":1,"b":{"x":1,"y":2}}' });
    const reordered = await send(server, '/charges', undefined, {
      key: 'k',
      rawBody: '{ "b": {"y":2,"x":1}, "a": 1 }',
    });

    expect(reordered.status).toBe(201);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    const [first, second] = server.ledger.requestsFor('k');
    expect(first?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(second?.fingerprint).toBe(first?.fingerprint);
  });

  it('fingerprints non-JSON bodies by their bytes', async () => {
    const server = await start();
    const headers = { 'Content-Type': 'text/plain' };
    await send(server, '/notes', undefined, { key: 'k', rawBody: 'hello', headers });
    const changed = await send(server, '/notes', undefined, { key: 'k', rawBody: 'hello!', headers });
    expect(changed.status).toBe(422);
  });

  it('accepts the structured-field (quoted) form of the key', async () => {
    const server = await start();
    await send(server, '/charges', { amount: 1 }, { key: '"quoted"' });
    const bare = await send(server, '/charges', { amount: 1 }, { key: 'quoted' });
    expect(bare.headers.get('idempotent-replayed')).toBe('true');
    expect(server.ledger.effectCount('quoted')).toBe(1);
  });

  it('matches a custom key header case-insensitively', async () => {
    const server = await start({ keyHeader: 'X-Request-Key' });
    const init = { method: 'POST', headers: { 'x-request-key': 'k', 'content-type': 'application/json' }, body: '{}' };
    await fetch(`${server.url}/a`, init);
    const again = await fetch(`${server.url}/a`, init);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(server.ledger.effectCount('k')).toBe(1);
  });

  it('forgets keys after keyRetentionMs: a reuse is new work', async () => {
    const clock = fakeClock();
    const server = await start({ now: clock.now, keyRetentionMs: 1000 });
    await send(server, '/charges', { amount: 5 }, { key: 'k' });
    clock.advance(999);
    const replay = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    clock.advance(1);
    const fresh = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(await fresh.json()).toEqual({ id: 'res_2', amount: 5 });
    expect(server.ledger.effectCount('k')).toBe(2);
    expect(server.ledger.requestsFor('k').map((entry) => entry.outcome)).toEqual(['effect', 'replay', 'expired_new']);
    expect(server.ledger.requestsFor('k').map((entry) => entry.at)).toEqual([
      1_700_000_000_000, 1_700_000_000_999, 1_700_000_001_000,
    ]);
  });

  it('rejects POST and PATCH without a key with 400 and no effect', async () => {
    const server = await start();
    const post = await send(server, '/charges', { amount: 5 });
    const patch = await send(server, '/charges/1', { amount: 5 }, { method: 'PATCH' });

    expect(post.status).toBe(400);
    expect(await post.json()).toMatchObject({ type: 'https://example.com/errors/idempotency-key-missing' });
    expect(patch.status).toBe(400);
    expect(server.ledger.totalEffects()).toBe(0);
    expect(server.ledger.requests.map((entry) => entry.outcome)).toEqual(['missing_key', 'missing_key']);
  });

  it('rejects a missing key in the stripe dialect too', async () => {
    const server = await start({ profile: 'stripe' });
    const post = await send(server, '/v1/charges', { amount: 5 });
    expect(post.status).toBe(400);
    expect(await post.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it('handles keyless GET, PUT and DELETE; GET is not an effect', async () => {
    const server = await start();
    const get = await fetch(`${server.url}/charges/1`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ ok: true });
    expect(server.ledger.totalEffects()).toBe(0);

    const put = await send(server, '/charges/1', { amount: 7 }, { method: 'PUT' });
    const del = await send(server, '/charges/1', undefined, { method: 'DELETE', rawBody: '' });
    expect(put.status).toBe(201);
    expect(del.status).toBe(201);
    expect(server.ledger.totalEffects()).toBe(2);
    expect(server.ledger.effects.size).toBe(0);
  });

  it('lets POST through without a key when requireKey is false', async () => {
    const server = await start({ requireKey: false });
    const post = await send(server, '/charges', { amount: 5 });
    expect(post.status).toBe(201);
    expect(server.ledger.totalEffects()).toBe(1);
  });

  it('answers 401 when authorize refuses, with no effect', async () => {
    const server = await start({ authorize: (header) => header === 'Bearer good' });
    const anonymous = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    const wrong = await send(server, '/charges', { amount: 5 }, { key: 'k', headers: { Authorization: 'Bearer bad' } });
    expect(anonymous.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(server.ledger.effectCount('k')).toBe(0);

    const good = await send(server, '/charges', { amount: 5 }, { key: 'k', headers: { Authorization: 'Bearer good' } });
    expect(good.status).toBe(201);
    expect(server.ledger.effectCount('k')).toBe(1);
    expect(server.ledger.requests.map((entry) => entry.outcome)).toEqual(['unauthorized', 'unauthorized', 'effect']);
  });

  it('does not store a 5xx from the handler: the retry runs again', async () => {
    let calls = 0;
    const server = await start({
      handle: ({ effectNumber }) => {
        calls += 1;
        return calls === 1 ? { status: 503, body: { error: 'busy' } } : { status: 200, body: { n: effectNumber } };
      },
    });
    const failed = await send(server, '/jobs', {}, { key: 'k' });
    const retried = await send(server, '/jobs', {}, { key: 'k' });
    const replayed = await send(server, '/jobs', {}, { key: 'k' });

    expect(failed.status).toBe(503);
    expect(retried.status).toBe(200);
    expect(await retried.json()).toEqual({ n: 2 });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(calls).toBe(2);
    expect(server.ledger.effectCount('k')).toBe(1);
    expect(server.ledger.requestsFor('k').map((entry) => entry.outcome)).toEqual(['failed', 'effect', 'replay']);
  });

  it('stores and replays a 4xx from the handler with its headers', async () => {
    const server = await start({
      handle: () => ({ status: 402, body: { error: 'card_declined' }, headers: { 'X-Decline': 'insufficient' } }),
    });
    await send(server, '/charges', { amount: 5 }, { key: 'k' });
    const replay = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(replay.status).toBe(402);
    expect(replay.headers.get('x-decline')).toBe('insufficient');
    expect(await replay.json()).toEqual({ error: 'card_declined' });
    expect(server.ledger.effectCount('k')).toBe(1);
  });
});

describe('reference server: scripted faults', () => {
  it('reset-after-commit: the client fails, the retry gets the stored result', async () => {
    const server = await start();
    server.script({ kind: 'reset-after-commit' });

    await expect(send(server, '/charges', { amount: 5 }, { key: 'k' })).rejects.toThrow(TypeError);
    expect(server.ledger.effectCount('k')).toBe(1);

    const retry = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual({ id: 'res_1', amount: 5 });
    expect(server.ledger.effectCount('k')).toBe(1);
    expect(server.ledger.requestsFor('k')[0]).toMatchObject({
      outcome: 'effect',
      status: 201,
      fault: 'reset-after-commit',
    });
  });

  it('drop-after-commit: the client gives up, the retry gets the replay', async () => {
    const server = await start();
    server.script({ kind: 'drop-after-commit' });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 100);

    await expect(
      send(server, '/charges', { amount: 5 }, { key: 'k', signal: controller.signal }),
    ).rejects.toMatchObject({
      name: 'AbortError',
    });
    clearTimeout(timer);
    expect(server.ledger.effectCount('k')).toBe(1);

    const retry = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual({ id: 'res_1', amount: 5 });
    expect(server.ledger.effectCount('k')).toBe(1);
  });

  it('reset-before-commit: the socket dies and nothing happens', async () => {
    const server = await start();
    server.script({ kind: 'reset-before-commit' });

    await expect(send(server, '/charges', { amount: 5 }, { key: 'k' })).rejects.toThrow(TypeError);
    expect(server.ledger.effectCount('k')).toBe(0);
    expect(server.ledger.requestsFor('k')).toMatchObject([{ outcome: 'fault', status: undefined }]);

    const retry = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(server.ledger.effectCount('k')).toBe(1);
  });

  it('status fault with Retry-After in seconds, then as an HTTP date, then verbatim', async () => {
    const server = await start();
    const date = new Date(Date.UTC(2015, 9, 21, 7, 28, 0));
    server.script(
      { kind: 'status', status: 503, retryAfter: 7 },
      { kind: 'status', status: 429, retryAfter: date, headers: { RateLimit: 'limit=10, remaining=0' } },
      { kind: 'status', status: 503, retryAfter: 'soon', body: { custom: true } },
    );

    const seconds = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(seconds.status).toBe(503);
    expect(seconds.headers.get('retry-after')).toBe('7');
    expect(seconds.headers.get('content-type')).toBe('application/problem+json');

    const dated = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(dated.status).toBe(429);
    expect(dated.headers.get('retry-after')).toBe('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(dated.headers.get('ratelimit')).toBe('limit=10, remaining=0');

    const verbatim = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(verbatim.headers.get('retry-after')).toBe('soon');
    expect(await verbatim.json()).toEqual({ custom: true });

    expect(server.ledger.effectCount('k')).toBe(0);
    expect(server.ledger.requestsFor('k').map((entry) => entry.status)).toEqual([503, 429, 503]);

    const recovered = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(recovered.status).toBe(201);
    expect(server.ledger.effectCount('k')).toBe(1);
  });

  it('consumes the first fault whose match fits, leaving the others queued', async () => {
    const server = await start();
    server.script(
      { match: { path: '/b' }, kind: 'status', status: 500 },
      { match: { key: 'k2', method: 'post' }, kind: 'status', status: 502 },
    );
    expect((await send(server, '/a', {}, { key: 'k1' })).status).toBe(201);
    expect((await send(server, '/a', {}, { key: 'k2' })).status).toBe(502);
    expect((await send(server, '/b', {}, { key: 'k3' })).status).toBe(500);
    expect((await send(server, '/b', {}, { key: 'k4' })).status).toBe(201);
  });

  it('outage answers everything until its end on the fake clock', async () => {
    const clock = fakeClock();
    const server = await start({ now: clock.now });
    server.setOutage({ status: 503, retryAfter: 2, until: clock.now() + 1000 });

    const down = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('2');
    expect((await fetch(`${server.url}/health`)).status).toBe(503);
    const preflight = await fetch(`${server.url}/charges`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);

    clock.advance(999);
    expect((await send(server, '/charges', { amount: 5 }, { key: 'k' })).status).toBe(503);
    clock.advance(1);
    expect((await send(server, '/charges', { amount: 5 }, { key: 'k' })).status).toBe(201);
    expect(server.ledger.effectCount('k')).toBe(1);
    expect(server.ledger.requests.map((entry) => entry.outcome)).toEqual(['outage', 'outage', 'outage', 'effect']);
  });

  it('outage without until lasts until cleared', async () => {
    const server = await start();
    server.setOutage({ status: 502 });
    expect((await send(server, '/a', {}, { key: 'k' })).status).toBe(502);
    server.setOutage(undefined);
    expect((await send(server, '/a', {}, { key: 'k' })).status).toBe(201);
  });

  it('hold(): the request commits, waits for release, and a mid-flight retry sees the replay', async () => {
    const server = await start();
    const hold = server.hold();
    let settled = false;
    const original = send(server, '/charges', { amount: 5 }, { key: 'k' }).then((response) => {
      settled = true;
      return response;
    });

    await hold.arrived;
    expect(server.ledger.effectCount('k')).toBe(1);
    const reload = await send(server, '/charges', { amount: 5 }, { key: 'k' });
    expect(reload.headers.get('idempotent-replayed')).toBe('true');
    // The replay was answered while the original is held: the original had every chance to finish, and did not.
    await turn();
    expect(settled).toBe(false);

    hold.release();
    const response = await original;
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ id: 'res_1', amount: 5 });
    expect(server.ledger.effectCount('k')).toBe(1);
    expect(server.ledger.maxConcurrent('k')).toBe(2);
  });

  it('close() does not hang on held or dropped requests', async () => {
    const server = await startReferenceServer();
    server.hold();
    server.script({ kind: 'drop-after-commit', match: { key: 'dropped' } });
    const held = send(server, '/a', {}, { key: 'held' }).catch((error: unknown) => error);
    const dropped = send(server, '/a', {}, { key: 'dropped' }).catch((error: unknown) => error);
    await server.waitForRequests(2);

    // close() itself must settle: if it waited for the held requests, the test would time out here.
    await server.close();
    expect(await held).toBeInstanceOf(TypeError);
    expect(await dropped).toBeInstanceOf(TypeError);
  });
});

describe('reference server: CORS, concurrency and bookkeeping', () => {
  it('answers a CORS preflight and exposes the retry headers on every response', async () => {
    const server = await start();
    const preflight = await fetch(`${server.url}/charges`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://app.test',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,idempotency-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://app.test');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type,idempotency-key');
    expect(preflight.headers.get('access-control-max-age')).toBe('600');
    expect(server.ledger.requests).toHaveLength(0);

    const withOrigin = await send(server, '/charges', {}, { key: 'k', headers: { Origin: 'http://app.test' } });
    expect(withOrigin.headers.get('access-control-allow-origin')).toBe('http://app.test');
    expect(withOrigin.headers.get('access-control-expose-headers')).toBe(
      'Retry-After, Idempotent-Replayed, RateLimit, RateLimit-Reset, RateLimit-Policy, Stripe-Should-Retry',
    );
    const anyOrigin = await send(server, '/charges', {}, { key: 'k2' });
    expect(anyOrigin.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('maxConcurrent is 1 for sequential use and counts overlapping requests per key', async () => {
    const server = await start();
    await send(server, '/a', {}, { key: 'seq' });
    await send(server, '/a', {}, { key: 'seq' });
    expect(server.ledger.maxConcurrent('seq')).toBe(1);
    expect(server.ledger.maxConcurrent('never-seen')).toBe(0);

    const hold = server.hold({ key: 'par' });
    const first = send(server, '/a', {}, { key: 'par' });
    await hold.arrived;
    // The second arrives while the first is held open: they overlap by construction, not by timing.
    const second = await send(server, '/a', {}, { key: 'par' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    hold.release();
    await first;
    expect(server.ledger.maxConcurrent('par')).toBe(2);
    expect(server.ledger.maxConcurrent()).toBe(2);
    expect(server.ledger.effectCount('par')).toBe(1);
  });

  it('waitForRequests resolves once enough requests were received', async () => {
    const server = await start();
    let done = false;
    const waiting = server.waitForRequests(2).then(() => {
      done = true;
    });
    await send(server, '/a', {}, { key: 'a' });
    expect(server.ledger.requests).toHaveLength(1);
    await turn();
    expect(done).toBe(false);
    await send(server, '/a', {}, { key: 'b' });
    await waiting;
    expect(done).toBe(true);
    await expect(server.waitForRequests(1)).resolves.toBeUndefined();
  });

  it('reset() clears keys, ledger, faults and outage', async () => {
    const server = await start();
    await send(server, '/a', { v: 1 }, { key: 'k' });
    const ledgerView = server.ledger.requests;
    server.script({ kind: 'status', status: 500 });
    server.setOutage({ status: 503 });
    server.reset();

    expect(server.ledger.requests).toHaveLength(0);
    expect(ledgerView).toHaveLength(0);
    const fresh = await send(server, '/a', { v: 1 }, { key: 'k' });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(await fresh.json()).toEqual({ id: 'res_1', v: 1 });
    expect(server.ledger.effectCount('k')).toBe(1);
  });
});
