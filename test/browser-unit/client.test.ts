/**
 * The browser client in Node: fake tabs (fakes.ts) sharing one store, a
 * real reference server, virtual time. What the real-browser suite cannot
 * provoke on demand: a drainer tab dying with an attempt on the wire,
 * browsers without Web Locks or BroadcastChannel, connection refused while
 * `navigator.onLine` says true, user switches, `clear()`.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type BrowserClient,
  type BrowserClientOptions,
  type BrowserOnlyEvents,
  createBrowserClient,
  createClient,
  InvalidOptionsError,
  memoryStore,
  type Outcome,
} from '../../src/browser.js';
import {
  createFakeRuntime,
  type FakeRuntime,
  type Fault,
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from '../../src/testing.js';
import { type FakeOrigin, type FakeTab, fakeOrigin } from './fakes.js';

interface World {
  rt: FakeRuntime;
  server: ReferenceServer;
  store: ReturnType<typeof memoryStore>;
  origin: FakeOrigin;
  database: string;
  open(
    options?: Partial<BrowserClientOptions>,
    tab?: { locks?: boolean; broadcast?: boolean },
  ): { client: BrowserClient; tab: FakeTab & { id: number } };
}

const cleanups: Array<() => Promise<void>> = [];
let worlds = 0;

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(serverOptions: ReferenceServerOptions = {}): Promise<World> {
  const rt = createFakeRuntime({ seed: 7 });
  const server = await startReferenceServer({ runtime: rt, ...serverOptions });
  const store = memoryStore({ now: rt.now });
  const origin = fakeOrigin(rt.track);
  const database = `unit-${process.pid}-${++worlds}`;
  const clients: BrowserClient[] = [];
  cleanups.push(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.close();
  });
  return {
    rt,
    server,
    store,
    origin,
    database,
    open(options = {}, tabOptions = {}) {
      const tab = origin.tab(tabOptions);
      const client = createBrowserClient({
        baseUrl: server.url,
        store,
        database,
        runtime: rt,
        fetch: rt.fetch,
        env: tab.env,
        drainIntervalMs: 1_000,
        settlePollMs: 500,
        recheckMs: 5_000,
        policy: { deadlineMs: 3_600_000, backoff: { jitter: 'none', baseDelayMs: 100 } },
        ...options,
      });
      clients.push(client);
      return { client, tab };
    },
  };
}

function recorded<E extends keyof BrowserOnlyEvents>(client: BrowserClient, event: E): BrowserOnlyEvents[E][] {
  const seen: BrowserOnlyEvents[E][] = [];
  client.on(event, (payload) => seen.push(payload));
  return seen;
}

function attemptsBy(client: BrowserClient): string[] {
  const keys: string[] = [];
  client.on('attempt:started', (e) => keys.push(e.key));
  return keys;
}

describe('records kept in memory only', () => {
  it("a read that sends no key is kept in this tab's memory (its store made on the first one), never in the page's store", async () => {
    const w = await world({ handle: (req) => ({ status: req.method === 'GET' ? 200 : 201, body: {} }) });
    const a = w.open();
    await w.rt.run(a.client.ready);
    const read = await w.rt.run(a.client.send({ method: 'GET', url: '/catalog', key: 'r1' }));
    expect(read).toMatchObject({ key: 'r1', status: 200, fromStore: false });
    expect(await w.store.get('r1')).toBeUndefined();
    const again = await w.rt.run(a.client.send({ method: 'GET', url: '/catalog', key: 'r2' }));
    expect(again).toMatchObject({ key: 'r2', status: 200 });
    // A keyed write beside them goes to the page's store, as always.
    await w.rt.run(a.client.send({ method: 'POST', url: '/payments', key: 'w1', json: {} }));
    expect((await w.rt.run(a.client.list())).map((r) => r.key)).toEqual(['w1']);
    expect(w.server.ledger.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'POST']);
  });
});

describe('one drainer (Web Locks)', () => {
  it("a follower never sends: its send() resolves with the drainer's result, announced over the channel", async () => {
    const w = await world();
    const a = w.open();
    const b = w.open({ settlePollMs: 3_600_000 });
    await w.rt.run(a.client.ready);
    const sentByA = attemptsBy(a.client);
    const sentByB = attemptsBy(b.client);
    const result = await w.rt.run(
      b.client.send({ method: 'POST', url: '/payments', key: 'from-b', json: { amount: 1 } }),
    );
    expect(result).toMatchObject({ key: 'from-b', status: 201, fromStore: false });
    expect(sentByA).toEqual(['from-b']);
    expect(sentByB).toEqual([]);
    expect((await w.store.get('from-b'))?.attempts.map((x) => x.owner)).toEqual([a.client.owner]);
    expect(a.client.status()).toMatchObject({ leader: true, mode: 'locks' });
    expect(b.client.status()).toMatchObject({ leader: false, mode: 'locks' });
  });

  it('without BroadcastChannel a follower finds the settlement by polling the store', async () => {
    const w = await world();
    const a = w.open({}, { broadcast: false });
    const b = w.open({}, { broadcast: false });
    await w.rt.run(a.client.ready);
    const { settled } = await b.client.enqueue({ method: 'POST', url: '/payments', key: 'quiet', json: {} });
    const outcome = await w.rt.run(settled);
    expect(outcome).toMatchObject({ ok: true, state: 'succeeded' });
    expect(w.server.ledger.effectCount('quiet')).toBe(1);
  });

  it('the drainer tab dies with an attempt on the wire: the next tab fences it off and resends the same key', async () => {
    const w = await world();
    const a = w.open();
    const b = w.open();
    await w.rt.run(a.client.ready);
    const hold = w.server.hold({ key: 'pay-1' });
    const fromB = b.client.send({ method: 'POST', url: '/payments', key: 'pay-1', json: { amount: 4800 } });
    await w.rt.run(hold.arrived);
    expect((await w.store.get('pay-1'))?.state).toBe('in_flight');

    // Tab A's document goes away: the browser frees its lock (its request is left hanging).
    const leaseUntil = (await w.store.get('pay-1'))?.lease?.until ?? 0;
    w.origin.locks.kill(a.tab.id);
    const result = await w.rt.run(fromB);
    // B did not wait for A's lease to run out: the lock proved A gone.
    expect(w.rt.now()).toBeLessThan(leaseUntil);
    expect(result).toMatchObject({ key: 'pay-1', status: 201, replayed: true });
    const record = await w.store.get('pay-1');
    expect(record?.attempts.map((x) => [x.owner, x.class])).toEqual([
      [a.client.owner, 'ambiguous'],
      [b.client.owner, 'completed'],
    ]);
    // Tab A's late answer cannot overwrite B's outcome: its epoch was fenced off.
    const epoch = record?.epoch;
    hold.release();
    await w.rt.run(w.server.waitForRequests(2));
    await w.rt.advance(2_000);
    expect((await w.store.get('pay-1'))?.epoch).toBe(epoch);
    expect((await w.store.get('pay-1'))?.state).toBe('succeeded');
    expect(w.server.ledger.effectCount('pay-1')).toBe(1);
    expect(w.server.ledger.requestsFor('pay-1').map((r) => r.outcome)).toEqual(['effect', 'replay']);
  });
});

describe('leases alone (no Web Locks)', () => {
  it('two tabs draining the same 30 operations: one sender at a time per key, one effect each', async () => {
    const w = await world({
      handle: async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return { status: 201, body: { id: `res_${req.effectNumber}` } };
      },
    });
    // Written ahead by a tab that closed before sending (leases released, nothing sent).
    const writer = createClient({
      baseUrl: w.server.url,
      store: w.store,
      runtime: w.rt,
      fetch: w.rt.fetch,
      connectivity: { online: () => false, onOnline: () => () => undefined },
    });
    const keys = Array.from({ length: 30 }, (_, i) => `op-${i}`);
    for (const key of keys) await writer.enqueue({ method: 'POST', url: '/orders', key, json: { key } });
    await writer.close();
    expect(w.server.ledger.requests).toHaveLength(0);

    const a = w.open({}, { locks: false });
    const b = w.open({}, { locks: false });
    expect([a.client.status().mode, b.client.status().mode]).toEqual(['leases', 'leases']);
    const fromA: Outcome[] = [];
    const fromB: Outcome[] = [];
    const [summaryA, summaryB] = await w.rt.run(
      Promise.all([
        a.client.resume({ onOutcome: (o) => void fromA.push(o) }),
        b.client.resume({ onOutcome: (o) => void fromB.push(o) }),
      ]),
    );
    // Each tab's summary counts exactly what it handed to its onOutcome.
    expect([summaryA.driven, summaryB.driven]).toEqual([fromA.length, fromB.length]);
    expect([summaryA.succeeded, summaryB.succeeded]).toEqual([
      fromA.filter((o) => o.ok).length,
      fromB.filter((o) => o.ok).length,
    ]);
    // A tab that lost the race for a key waits for the winner and reports the same outcome.
    expect(new Set([...fromA, ...fromB].filter((o) => o.ok).map((o) => o.key))).toEqual(new Set(keys));
    for (const key of keys) {
      expect(w.server.ledger.effectCount(key)).toBe(1);
      const record = await w.store.get(key);
      expect(record?.state).toBe('succeeded');
      // Every attempt of one operation came from one tab.
      expect(new Set(record?.attempts.map((x) => x.owner)).size).toBe(1);
    }
    expect(w.server.ledger.maxConcurrent()).toBe(1);
    expect(w.server.ledger.requests).toHaveLength(30);
  });
});

describe('leases alone: a live lease is never taken', () => {
  it("a tab without Web Locks leaves another tab's attempt on the wire alone until its lease runs out", async () => {
    const w = await world();
    const a = w.open({ leaseMs: 5_000, policy: { attemptTimeoutMs: 5_000, deadlineMs: 3_600_000 } }, { locks: false });
    const hold = w.server.hold({ key: 'slow' });
    const fromA = a.client.send({ method: 'POST', url: '/payments', key: 'slow', json: {} });
    await w.rt.run(hold.arrived);
    const b = w.open({}, { locks: false });
    const sentByB = attemptsBy(b.client);
    await w.rt.run(b.client.ready);
    await w.rt.advance(3_000);
    await w.rt.run(b.client.resume());
    expect(sentByB).toEqual([]);
    expect(w.server.ledger.maxConcurrent('slow')).toBe(1);
    hold.release();
    expect(await w.rt.run(fromA)).toMatchObject({ status: 201 });
    expect(w.server.ledger.requestsFor('slow')).toHaveLength(1);
  });
});

describe('offline and unreachable', () => {
  it('connection refused while navigator.onLine says true: nothing counted, the whole queue pauses until the recheck', async () => {
    let refusing = true;
    let refused = 0;
    const w = await world();
    const refusingFetch: typeof fetch = async (input, init) => {
      if (refusing) {
        refused++;
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }),
        });
      }
      return w.rt.fetch(input, init);
    };
    const { client } = w.open({ fetch: refusingFetch, recheckMs: 30_000, concurrency: 2 });
    const changes = recorded(client, 'connectivity:changed');
    await w.rt.run(client.ready);
    const first = await client.enqueue({ method: 'POST', url: '/payments', key: 'first', json: {} });
    await w.rt.advance(1_000);
    expect(client.status().online).toBe(false);
    expect(changes).toEqual([{ online: false, reason: 'not_sent' }]);
    const more = await Promise.all(
      ['m1', 'm2', 'm3'].map((key) => client.enqueue({ method: 'POST', url: '/payments', key, json: { key } })),
    );
    await w.rt.advance(20_000);
    // One refused attempt, then the queue waited: no attempt for the others at all.
    expect(refused).toBe(1);
    for (const key of ['m1', 'm2', 'm3']) expect((await w.store.get(key))?.attempts).toEqual([]);

    refusing = false;
    const outcomes = await w.rt.run(Promise.all([first.settled, ...more.map((m) => m.settled)]));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(changes.map((c) => `${c.online}:${c.reason}`)).toEqual(['false:not_sent', 'true:recheck']);
    expect(outcomes[0]?.record?.attempts.map((x) => [x.class, x.sent])).toEqual([
      ['not_sent', 'not'],
      ['completed', 'definitely'],
    ]);
    expect(outcomes.slice(1).map((o) => o.record?.attempts.length)).toEqual([1, 1, 1]);
    expect(w.server.ledger.totalEffects()).toBe(4);
  });

  it("the browser's online event ends the pause at once, and the page becoming visible does too", async () => {
    let refusing = true;
    const w = await world();
    const fetchOrRefuse: typeof fetch = async (input, init) => {
      if (refusing) throw new TypeError('fetch failed', { cause: { code: 'ENOTFOUND' } });
      return w.rt.fetch(input, init);
    };
    const { client, tab } = w.open({ fetch: fetchOrRefuse, recheckMs: 3_600_000 });
    const changes = recorded(client, 'connectivity:changed');
    const one = await client.enqueue({ method: 'POST', url: '/payments', key: 'one', json: {} });
    await w.rt.advance(1_000);
    expect(client.status().online).toBe(false);
    refusing = false;
    tab.setOnline(true);
    expect((await w.rt.run(one.settled)).ok).toBe(true);

    refusing = true;
    const two = await client.enqueue({ method: 'POST', url: '/payments', key: 'two', json: {} });
    await w.rt.advance(1_000);
    expect(client.status().online).toBe(false);
    refusing = false;
    tab.setVisible(false);
    tab.setVisible(true);
    expect((await w.rt.run(two.settled)).ok).toBe(true);
    expect(changes.map((c) => `${c.online}:${c.reason}`)).toEqual([
      'false:not_sent',
      'true:online',
      'false:not_sent',
      'true:visible',
    ]);
  });

  it('a transport failure without an answer is ambiguous (counted, same key) and pauses the others too', async () => {
    let failing = true;
    const w = await world();
    const flaky: typeof fetch = async (input, init) => {
      if (failing) throw new TypeError('Failed to fetch');
      return w.rt.fetch(input, init);
    };
    const { client } = w.open({ fetch: flaky, recheckMs: 10_000 });
    const changes = recorded(client, 'connectivity:changed');
    const a = await client.enqueue({ method: 'POST', url: '/payments', key: 'a', json: {} });
    await w.rt.advance(500);
    const b = await client.enqueue({ method: 'POST', url: '/payments', key: 'b', json: {} });
    await w.rt.advance(5_000);
    expect((await w.store.get('b'))?.attempts).toEqual([]);
    failing = false;
    const [oa, ob] = await w.rt.run(Promise.all([a.settled, b.settled]));
    expect(oa?.record?.attempts.map((x) => x.class)).toEqual(['ambiguous', 'completed']);
    expect(ob?.record?.attempts.map((x) => x.class)).toEqual(['completed']);
    expect(changes[0]).toEqual({ online: false, reason: 'transport_error' });
  });

  it('navigator offline: the drainer makes no attempt; online drains in scope order', async () => {
    const w = await world();
    const { client, tab } = w.open({ concurrency: 2 });
    tab.setOnline(false);
    const queued = [];
    for (const key of ['s1', 's2', 's3'])
      queued.push(await client.enqueue({ method: 'POST', url: '/x', key, scope: 'cart', json: { key } }));
    await w.rt.advance(60_000);
    expect(w.server.ledger.requests).toHaveLength(0);
    tab.setOnline(true);
    const outcomes = await w.rt.run(Promise.all(queued.map((q) => q.settled)));
    expect(outcomes.every((o) => o.ok && o.record?.attempts.length === 1)).toBe(true);
    expect(w.server.ledger.requests.map((r) => r.key)).toEqual(['s1', 's2', 's3']);
  });
});

describe('users and clear()', () => {
  it("stamps the user; only the current user's operations are sent; clear() removes theirs, not others'", async () => {
    let user: string | undefined = 'alice';
    const w = await world();
    const { client, tab } = w.open({ user: () => user });
    tab.setOnline(false);
    const alice = await Promise.all(
      ['a1', 'a2'].map((key) => client.enqueue({ method: 'POST', url: '/payments', key, json: { key } })),
    );
    const done = await client.enqueue({ method: 'POST', url: '/payments', key: 'a-done', json: {} });
    expect((await w.store.get('a1'))?.meta).toEqual({ userId: 'alice' });
    // Alice's queue stays as it is while Bob is signed in (a fresh start of the page, say).
    await client.close();
    user = 'bob';
    const again = w.open({ user: () => user });
    await w.rt.run(again.client.ready);
    const bob = await again.client.enqueue({ method: 'POST', url: '/payments', key: 'b1', json: {} });
    expect((await w.rt.run(bob.settled)).ok).toBe(true);
    await w.rt.advance(10_000);
    expect(w.server.ledger.requests.map((r) => r.key)).toEqual(['b1']);
    expect((await w.store.get('a1'))?.state).toBe('pending');

    // Alice signs in again: her operations go; then she logs out with one still queued.
    user = 'alice';
    await w.rt.run(again.client.resume());
    expect(w.server.ledger.effectCount('a1')).toBe(1);
    expect(w.server.ledger.effectCount('a-done')).toBe(1);
    again.tab.setOnline(false);
    const late = await again.client.enqueue({ method: 'POST', url: '/payments', key: 'a3', json: {} });
    const result = await again.client.clear();
    expect(result).toEqual({ removed: ['a3'], mayHaveTakenEffect: [], inFlight: [] });
    expect(await w.store.get('a3')).toBeUndefined();
    expect((await w.rt.run(late.settled)).ok).toBe(false);
    // Finished ones only with `finished: true`; Bob's are never touched.
    const all = await again.client.clear({ finished: true });
    expect(all.removed.sort()).toEqual(['a-done', 'a1', 'a2']);
    expect((await w.store.list()).map((r) => r.key)).toEqual(['b1']);
    expect(alice).toHaveLength(2);
    expect(done.key).toBe('a-done');
  });

  it('clear() leaves an operation that is on the wire, and flags removed ones that may have been applied', async () => {
    const w = await world();
    const { client } = w.open({
      user: () => 'u',
      policy: { attemptTimeoutMs: 1_000, deadlineMs: 3_600_000, backoff: { jitter: 'none', baseDelayMs: 60_000 } },
    });
    // One whose answer was lost (maybe applied), now waiting a minute for its retry.
    w.server.script({ kind: 'drop-after-commit', match: { key: 'maybe' } });
    const retrying = new Promise<void>((resolve) =>
      client.on('retry:scheduled', (e) => {
        if (e.key === 'maybe') resolve();
      }),
    );
    const maybe = await client.enqueue({ method: 'POST', url: '/payments', key: 'maybe', json: {} });
    await w.rt.run(retrying);
    // And one on the wire right now.
    const hold = w.server.hold({ key: 'wire' });
    const wire = await client.enqueue({ method: 'POST', url: '/payments', key: 'wire', json: {} });
    await w.rt.run(hold.arrived);

    const result = await client.clear();
    expect(result).toEqual({ removed: ['maybe'], mayHaveTakenEffect: ['maybe'], inFlight: ['wire'] });
    expect(await w.store.get('maybe')).toBeUndefined();
    expect((await w.rt.run(maybe.settled)).ok).toBe(false);
    hold.release();
    expect((await w.rt.run(wire.settled)).ok).toBe(true);
    expect(w.server.ledger.effectCount('wire')).toBe(1);
    // The removed one is never sent again.
    await w.rt.advance(120_000);
    expect(w.server.ledger.requestsFor('maybe')).toHaveLength(1);
  });

  /** The `authorization` header of every request the client sends through `rt.fetch`. */
  function authorizationsOf(w: World): { fetch: typeof fetch; seen: (string | null)[] } {
    const seen: (string | null)[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => {
      seen.push(
        new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('authorization'),
      );
      return w.rt.fetch(input, init);
    };
    return { fetch, seen };
  }

  it("a user switch during a retry delay stops the retry: one user's operation never goes with another's credentials", async () => {
    let user = 'alice';
    const w = await world();
    const auth = authorizationsOf(w);
    const { client } = w.open({
      user: () => user,
      fetch: auth.fetch,
      headers: () => ({ authorization: `Bearer ${user}` }),
    });
    w.server.script({ kind: 'status', status: 503, match: { key: 'alice-pay' } });
    const retrying = new Promise<void>((resolve) => client.on('retry:scheduled', () => resolve()));
    const pay = await client.enqueue({ method: 'POST', url: '/payments', key: 'alice-pay', json: { amount: 4800 } });
    await w.rt.run(retrying);
    user = 'bob';
    await w.rt.advance(10_000);
    expect(auth.seen).toEqual(['Bearer alice']);
    expect(w.server.ledger.effectCount('alice-pay')).toBe(0);
    // Left pending, its lease given back, for Alice's next session.
    const held = await w.store.get('alice-pay');
    expect(held?.state).toBe('pending');
    expect(held?.lease).toBeUndefined();
    // Alice signs in again: it goes, with her credentials.
    user = 'alice';
    expect((await w.rt.run(pay.settled)).ok).toBe(true);
    expect(auth.seen).toEqual(['Bearer alice', 'Bearer alice']);
    expect(w.server.ledger.effectCount('alice-pay')).toBe(1);
  });

  it("a user switch while the headers callback is still answering: the answer (the new user's token) is not used", async () => {
    let user = 'alice';
    const w = await world();
    const auth = authorizationsOf(w);
    let answer: (() => void) | undefined;
    const { client } = w.open({
      user: () => user,
      fetch: auth.fetch,
      // Attempt 1 at once; attempt 2's token refresh takes a while, and returns whoever is signed in by then.
      headers: (ctx) =>
        ctx.attempt === 1
          ? { authorization: `Bearer ${user}` }
          : new Promise((resolve) => {
              answer = () => resolve({ authorization: `Bearer ${user}` });
            }),
    });
    w.server.script({ kind: 'status', status: 503, match: { key: 'alice-pay' } });
    await client.enqueue({ method: 'POST', url: '/payments', key: 'alice-pay', json: {} });
    await w.rt.advance(1_000);
    expect(answer).toBeDefined();
    user = 'bob';
    answer?.();
    await w.rt.advance(10_000);
    expect(auth.seen).toEqual(['Bearer alice']);
    expect((await w.store.get('alice-pay'))?.state).toBe('pending');
  });

  it('an operation held back for another user and then removed: its caller hears "may have taken effect", not "not found"', async () => {
    let user = 'alice';
    const w = await world();
    const { client } = w.open({
      user: () => user,
      policy: { attemptTimeoutMs: 1_000, deadlineMs: 3_600_000, backoff: { jitter: 'none', baseDelayMs: 100 } },
    });
    // Attempt 1's answer is lost: it may have been applied.
    w.server.script({ kind: 'drop-after-commit', match: { key: 'alice-pay' } });
    const pay = await client.enqueue({ method: 'POST', url: '/payments', key: 'alice-pay', json: {} });
    await w.rt.advance(1_050);
    user = 'bob';
    await w.rt.advance(5_000);
    expect((await w.store.get('alice-pay'))?.state).toBe('pending');
    const cleared = await client.clear({ userId: 'alice' });
    expect(cleared).toEqual({ removed: ['alice-pay'], mayHaveTakenEffect: ['alice-pay'], inFlight: [] });
    const outcome = await w.rt.run(pay.settled);
    expect(outcome.ok || outcome.error).toMatchObject({ code: 'operation_failed', mayHaveTakenEffect: true });
  });

  it("the same without a headers callback (a cookie session): the next user's session never sends it", async () => {
    let user = 'alice';
    const w = await world();
    const { client } = w.open({ user: () => user });
    w.server.script({ kind: 'status', status: 503, match: { key: 'alice-pay' } });
    const retrying = new Promise<void>((resolve) => client.on('retry:scheduled', () => resolve()));
    await client.enqueue({ method: 'POST', url: '/payments', key: 'alice-pay', json: {} });
    await w.rt.run(retrying);
    user = 'bob';
    await w.rt.advance(10_000);
    expect(w.server.ledger.requestsFor('alice-pay')).toHaveLength(1);
    expect((await w.store.get('alice-pay'))?.state).toBe('pending');
  });

  it('an operation held back for another user is looked at once per poll, not in a loop (scope order, user switch)', async () => {
    let user = 'alice';
    const w = await world();
    const { client, tab } = w.open({ user: () => user });
    tab.setOnline(false);
    await client.enqueue({ method: 'POST', url: '/payments', key: 'c1', scope: 'cart', json: {} });
    await client.enqueue({ method: 'POST', url: '/payments', key: 'c2', scope: 'cart', json: {} });
    user = 'bob';
    let reads = 0;
    const get = w.store.get;
    // Each read takes a macrotask, like an IndexedDB request: a loop of reads then shows as a count, not a hang.
    w.store.get = async (key) => {
      reads++;
      await new Promise((resolve) => setImmediate(resolve));
      return get(key);
    };
    tab.setOnline(true);
    await w.rt.advance(10_000);
    w.store.get = get;
    expect(w.server.ledger.requests).toHaveLength(0);
    // A poll a second, a few reads each, for 10 s; a loop would make thousands.
    expect(reads).toBeLessThan(200);
  });

  /**
   * `pay` is listed as pending (its first attempt got a 503), then the drainer's retry (`retry`) runs
   * before clear() gets to it: clear() is handed the listing taken before. What it reports must follow
   * the record as stored when it acts, not the listing.
   */
  async function clearRacingRetry(retry: Fault[], options: { finished?: boolean } = {}) {
    const w = await world();
    const { client } = w.open({
      user: () => 'u',
      policy: { attemptTimeoutMs: 1_000, deadlineMs: 3_600_000, backoff: { jitter: 'none', baseDelayMs: 100 } },
    });
    w.server.script({ kind: 'status', status: 503, match: { key: 'pay' } }, ...retry);
    const retrying = new Promise<void>((resolve) => client.on('retry:scheduled', () => resolve()));
    const pay = await client.enqueue({ method: 'POST', url: '/payments', key: 'pay', json: { amount: 4800 } });
    await w.rt.run(retrying);
    const listing = await w.store.list();
    expect(listing.map((r) => [r.key, r.state])).toEqual([['pay', 'pending']]);
    // The retry is due after 100 ms; one whose answer is lost times out at 1.1 s and waits 200 ms more.
    await w.rt.advance(1_150);
    const list = w.store.list;
    w.store.list = async () => listing;
    const result = await client.clear(options);
    w.store.list = list;
    return { w, pay, result };
  }

  it('clear() keeps an operation that succeeded after its listing, and never calls it removed', async () => {
    const { w, pay, result } = await clearRacingRetry([]);
    expect(w.server.ledger.effectCount('pay')).toBe(1);
    expect(result).toEqual({ removed: [], mayHaveTakenEffect: [], inFlight: [] });
    expect((await w.store.get('pay'))?.state).toBe('succeeded');
    expect((await w.rt.run(pay.settled)).ok).toBe(true);
  });

  it('with finished: true it removes that one, flagged as applied', async () => {
    const { w, result } = await clearRacingRetry([], { finished: true });
    expect(w.server.ledger.effectCount('pay')).toBe(1);
    expect(result).toEqual({ removed: ['pay'], mayHaveTakenEffect: ['pay'], inFlight: [] });
    expect(await w.store.get('pay')).toBeUndefined();
  });

  it('clear() flags an operation whose attempt after its listing may have been applied', async () => {
    const { w, pay, result } = await clearRacingRetry([{ kind: 'drop-after-commit', match: { key: 'pay' } }]);
    expect(w.server.ledger.effectCount('pay')).toBe(1);
    expect(result).toEqual({ removed: ['pay'], mayHaveTakenEffect: ['pay'], inFlight: [] });
    expect(await w.store.get('pay')).toBeUndefined();
    const outcome = await w.rt.run(pay.settled);
    // The caller of enqueue() hears the same: removed, and maybe applied (never "not found", never "not done").
    expect(outcome).toMatchObject({ ok: false, state: 'pending' });
    expect(outcome.ok || outcome.error).toMatchObject({ code: 'operation_failed', mayHaveTakenEffect: true });
  });

  it('clear({ finished: true }) leaves one that retry() reopened after its listing and is on the wire now', async () => {
    const w = await world();
    const { client } = w.open({ user: () => 'u' });
    w.server.script({ kind: 'status', status: 400, match: { key: 'fix' } });
    const first = await client.enqueue({ method: 'POST', url: '/payments', key: 'fix', json: {} });
    expect(await w.rt.run(first.settled)).toMatchObject({ ok: false, state: 'blocked' });
    const listing = await w.store.list();
    // Fixed, and resent with the same key: its attempt is on the wire when clear() gets to it.
    const hold = w.server.hold({ key: 'fix' });
    const retried = client.retry('fix');
    await w.rt.run(hold.arrived);
    const list = w.store.list;
    w.store.list = async () => listing;
    const result = await client.clear({ finished: true });
    w.store.list = list;
    expect(result).toEqual({ removed: [], mayHaveTakenEffect: [], inFlight: ['fix'] });
    hold.release();
    expect(await w.rt.run(retried)).toMatchObject({ ok: true });
    expect(w.server.ledger.effectCount('fix')).toBe(1);
  });

  it('with a user configured, clear() needs one', async () => {
    const w = await world();
    const { client } = w.open({ user: () => undefined });
    await expect(client.clear()).rejects.toThrow(/no current user/);
  });
});

describe('storage', () => {
  it('reports a wiped IndexedDB database (event, callback, status) in this tab and the others', async () => {
    const w = await world();
    const database = `${w.database}-idb`;
    const tabOptions = { locks: true };
    const open = (onStoreWiped?: (r: unknown) => void) => {
      const tab = w.origin.tab(tabOptions);
      const client = createBrowserClient({
        database,
        runtime: w.rt,
        env: { ...tab.env, indexedDB },
        drainIntervalMs: 1_000,
        ...(onStoreWiped === undefined ? {} : { onStoreWiped }),
      });
      cleanups.push(() => client.close());
      return client;
    };
    const first = open();
    await w.rt.run(first.ready);
    expect(first.status().storage.wiped).toBeUndefined();
    await first.close();
    await new Promise<void>((resolve, reject) => {
      const request = indexedDB.deleteDatabase(database);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
    });
    // Two tabs start after the wipe: whichever checks first finds it and tells the other.
    const calls: unknown[] = [];
    const other = open();
    const third = open((r) => calls.push(r));
    const otherSaw = recorded(other, 'store:wiped');
    const thirdSaw = recorded(third, 'store:wiped');
    await w.rt.run(Promise.all([other.ready, third.ready]));
    await w.rt.advance(100);
    for (const client of [other, third]) expect(client.status().storage.wiped?.database).toBe(database);
    expect(otherSaw).toHaveLength(1);
    expect(thirdSaw).toHaveLength(1);
    expect(calls).toHaveLength(1);
    // A later start is quiet again.
    const fourth = open();
    await w.rt.run(fourth.ready);
    expect(fourth.status().storage.wiped).toBeUndefined();
  });

  it('asks for persistent storage when configured and reports the answer', async () => {
    const w = await world();
    const tab = w.origin.tab();
    let asked = 0;
    const client = createBrowserClient({
      store: w.store,
      database: w.database,
      runtime: w.rt,
      persist: true,
      env: {
        ...tab.env,
        navigator: {
          onLine: true,
          storage: {
            persisted: async () => false,
            persist: async () => {
              asked++;
              return true;
            },
          },
        },
      },
    });
    cleanups.push(() => client.close());
    const answers = recorded(client, 'storage:persisted');
    await w.rt.run(client.ready);
    expect(asked).toBe(1);
    expect(answers).toEqual([{ persisted: true }]);
    expect(client.status().storage.persisted).toBe(true);
  });
});

describe('live view and options', () => {
  it('a follow tab sees the drainer work live through subscribe()', async () => {
    const w = await world();
    const a = w.open();
    const b = w.open();
    await w.rt.run(a.client.ready);
    const states: string[] = [];
    b.client.subscribe((s) => {
      const op = s.operations.find((o) => o.key === 'watched');
      if (op !== undefined && states[states.length - 1] !== op.state) states.push(op.state);
    });
    const hold = w.server.hold({ key: 'watched' });
    const { settled } = await a.client.enqueue({ method: 'POST', url: '/payments', key: 'watched', json: {} });
    await w.rt.run(hold.arrived);
    await w.rt.advance(50);
    hold.release();
    await w.rt.run(settled);
    await w.rt.advance(50);
    // The view is loaded with import() (real time): when its first look comes before the drainer's
    // claim, it sees the operation still pending, and only then. What must hold is the live part:
    // the attempt in flight while the server holds it, then the success.
    expect(states.filter((state) => state !== 'pending')).toEqual(['in_flight', 'succeeded']);
    expect(states.indexOf('pending')).toBeLessThanOrEqual(0);
  });

  it('refuses bad options, naming the field', async () => {
    expect(() => createBrowserClient({ concurrency: 0, store: memoryStore(), env: {} })).toThrow(InvalidOptionsError);
    expect(() => createBrowserClient({ concurrency: 1.5, store: memoryStore(), env: {} })).toThrow(/concurrency/);
    expect(() => createBrowserClient({ drainIntervalMs: -1, store: memoryStore(), env: {} })).toThrow(
      /drainIntervalMs/,
    );
    expect(() =>
      createBrowserClient({ user: 'alice' as unknown as () => string, store: memoryStore(), env: {} }),
    ).toThrow(/user/);
    expect(() => createBrowserClient({ settlePollMs: Infinity, store: memoryStore(), env: {} })).toThrow(
      /`settlePollMs`: must be a positive number$/,
    );
    expect(() =>
      createBrowserClient({ backgroundSync: 'yes' as unknown as boolean, store: memoryStore(), env: {} }),
    ).toThrow(/`backgroundSync`: expected a boolean$/);
    // Unknown names are refused with the name meant; the core's connectivity and dispatch are the browser client's own.
    const bogus = (extra: Record<string, unknown>) => () =>
      createBrowserClient({ store: memoryStore(), env: {}, ...extra } as Parameters<typeof createBrowserClient>[0]);
    expect(bogus({ prefixUrl: 'https://a.test' })).toThrow(/`prefixUrl`: unknown option: use `baseUrl`/);
    expect(bogus({ dispatch: () => undefined })).toThrow(/`dispatch`: unknown option/);
    expect(bogus({ connectivity: {} })).toThrow(/`connectivity`: unknown option/);
  });
});
