/**
 * The memory store on its own: it sweeps itself (by its injected clock, at
 * most every `sweepIntervalMs`), and every write after a claim is fenced by
 * the claim's epoch.
 */
import { describe, expect, it } from 'vitest';
import { type ClaimRequest, idempotency, memoryIdempotencyStore } from '../../src/server.js';

const claimOf = (key: string, overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
  scope: 's',
  key,
  fingerprint: 'f',
  leaseMs: 1_000,
  retentionMs: 10_000,
  rerunAbandoned: false,
  atomic: false,
  ...overrides,
});
const stored = { status: 201, headers: [] as [string, string][], body: new Uint8Array([1]) };

describe('memoryIdempotencyStore', () => {
  it('sweeps expired records on a claim once sweepIntervalMs has passed, not before', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now, sweepIntervalMs: 60_000 });
    for (const key of ['a', 'b', 'c']) await store.claim(claimOf(key));
    clock.now = 30_000; // expired, but the last sweep was less than a minute ago
    await store.claim(claimOf('d'));
    expect(store.size).toBe(4);
    clock.now = 60_000;
    await store.claim(claimOf('e'));
    expect(store.size).toBe(1); // a–d expired (d at 40 s); e is new
  });

  it('fences by epoch: a stale claim can neither store, release nor abandon a newer one', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now });
    const first = await store.claim(claimOf('k', { rerunAbandoned: true }));
    clock.now = 1_000;
    const second = await store.claim(claimOf('k', { rerunAbandoned: true }));
    expect(first).toMatchObject({ kind: 'claimed', epoch: 1, rerun: false });
    expect(second).toMatchObject({ kind: 'claimed', epoch: 2, rerun: true });
    const stale = { scope: 's', key: 'k', epoch: 1 };
    expect(await store.complete(stale, stored)).toBe(false);
    await store.release(stale);
    await store.abandon(stale);
    expect(await store.claim(claimOf('k'))).toMatchObject({ kind: 'in_progress', leaseRemainingMs: 1_000 });
    expect(await store.complete({ ...stale, epoch: 2 }, stored)).toBe(true);
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'completed', response: stored });
  });

  it('the claim it hands out writes only to its own record: not to one made after it was released or swept, under the same epoch', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now, sweepIntervalMs: 1 });
    const released = await store.claim(claimOf('k'));
    if (released.kind !== 'claimed' || released.claim === undefined) throw new Error('not claimed with a handle');
    await store.release(released.claim);
    const next = await store.claim(claimOf('k'));
    if (next.kind !== 'claimed' || next.claim === undefined) throw new Error('not claimed with a handle');
    expect([released.epoch, next.epoch]).toEqual([1, 1]);
    expect(await store.renew(released.claim, 5_000)).toBe(false);
    expect(await store.complete(released.claim, stored)).toBe(false);
    await store.release(released.claim);
    expect(await store.claim(claimOf('k'))).toMatchObject({ kind: 'in_progress', leaseRemainingMs: 1_000 });
    // Swept at the end of its retention, and claimed again: the old handle is out there too.
    clock.now = 10_000;
    const swept = next.claim;
    expect(await store.sweep()).toBe(1);
    const third = await store.claim(claimOf('k'));
    expect(third).toMatchObject({ kind: 'claimed', epoch: 1 });
    expect(await store.complete(swept, stored)).toBe(false);
    if (third.kind !== 'claimed' || third.claim === undefined) throw new Error('not claimed with a handle');
    expect(await store.complete(third.claim, stored)).toBe(true);
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'completed', response: stored });
  });

  it('abandoned: reported once per epoch, a mismatch first', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now });
    await store.claim(claimOf('k'));
    clock.now = 1_000;
    expect(await store.claim(claimOf('k', { fingerprint: 'other' }))).toEqual({ kind: 'mismatch' });
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'abandoned', epoch: 1, firstReport: true });
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'abandoned', epoch: 1, firstReport: false });
  });

  it('replays the exact bytes and headers it stored: every byte value, a large body, an empty one', async () => {
    const store = memoryIdempotencyStore({ now: () => 0 });
    const bodies = {
      every: Uint8Array.from({ length: 256 }, (_, i) => 255 - i),
      large: Uint8Array.from({ length: 5_000 }, (_, i) => (i * 7) % 256),
      empty: new Uint8Array(0),
    };
    for (const [key, body] of Object.entries(bodies)) {
      const { epoch } = (await store.claim(claimOf(key))) as { epoch: number };
      const headers: [string, string][] = [
        ['content-type', 'application/octet-stream'],
        ['location', `/x/${key}`],
      ];
      expect(await store.complete({ scope: 's', key, epoch }, { status: 201, headers, body })).toBe(true);
      headers[0] = ['content-type', 'text/plain']; // the caller's array, changed afterwards: not the record's
    }
    for (const [key, body] of Object.entries(bodies)) {
      expect(await store.claim(claimOf(key))).toEqual({
        kind: 'completed',
        response: {
          status: 201,
          headers: [
            ['content-type', 'application/octet-stream'],
            ['location', `/x/${key}`],
          ],
          body,
        },
      });
    }
  });

  it('records with the same header list share one copy; a different list gets its own', async () => {
    const store = memoryIdempotencyStore({ now: () => 0 });
    const json = (): [string, string][] => [['content-type', 'application/json']];
    const replayed = [];
    for (const [key, headers] of [
      ['a', json()],
      ['b', json()],
      ['c', [['content-type', 'text/plain']] as [string, string][]],
    ] as const) {
      const { epoch } = (await store.claim(claimOf(key))) as { epoch: number };
      await store.complete({ scope: 's', key, epoch }, { status: 200, headers, body: new Uint8Array([1]) });
      replayed.push(((await store.claim(claimOf(key))) as { response: { headers: unknown } }).response.headers);
    }
    expect(replayed[0]).toBe(replayed[1]);
    expect(replayed[2]).not.toBe(replayed[0]);
    expect(replayed[2]).toEqual([['content-type', 'text/plain']]);
    expect(Object.isFrozen(replayed[0])).toBe(true);
  });
});

describe('the guard on the memory store', () => {
  const payRequest = (key: string) =>
    new Request('http://shop.test/payments', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: '{"amount":100}',
    });

  it("takes the store's claim at once, and still calls a claim that replaced the store's own", async () => {
    const store = memoryIdempotencyStore();
    const claimed: string[] = [];
    const own = store.claim.bind(store);
    // A wrapper (a test's, an application's metrics) put on the store: the guard must go through it.
    store.claim = (request) => {
      claimed.push(request.key);
      return own(request);
    };
    let effects = 0;
    const guard = idempotency({ store, scopeOf: () => 'alice', routes: { 'POST /payments': {} } });
    const wrapped = guard.wrap(async () => {
      effects += 1;
      return Response.json({ id: `pay_${effects}` }, { status: 201 });
    });
    const first = await wrapped(payRequest('k1'));
    const again = await wrapped(payRequest('k1'));
    expect([first.status, again.status, again.headers.get('idempotent-replayed'), effects]).toEqual([
      201,
      201,
      'true',
      1,
    ]);
    expect(claimed).toEqual(['k1', 'k1']);
  });

  it('one effect for duplicates sent at once, the others told it is in progress', async () => {
    let effects = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const guard = idempotency({
      store: memoryIdempotencyStore(),
      scopeOf: () => 'alice',
      routes: { 'POST /payments': {} },
    });
    const wrapped = guard.wrap(async () => {
      effects += 1;
      await gate;
      return Response.json({ ok: true }, { status: 201 });
    });
    const first = wrapped(payRequest('k1'));
    const others = await Promise.all(Array.from({ length: 5 }, () => wrapped(payRequest('k1'))));
    release();
    expect([(await first).status, ...others.map((r) => r.status), effects]).toEqual([201, 409, 409, 409, 409, 409, 1]);
  });
});
