/**
 * `resume()` on a store that claims on its own clock (`claimDue`, as the
 * PostgreSQL store does): it drives exactly what the store hands out, asks
 * for its free slots plus a small prefetch (never sending more than its
 * slots at once), claims again as slots free, and never
 * takes another owner's lease on its own clock's word. The store here is the
 * memory store with a `claimDue` whose clock is a variable of the test.
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../../src/client.js';
import { prefetchOf } from '../../../src/flow/calls/claim-pass.js';
import type { OperationRecord } from '../../../src/model.js';
import { sampleRecord } from '../../../src/store/contract.js';
import { memoryStore } from '../../../src/store/memory.js';
import type { ClaimRequest, OperationStore } from '../../../src/store/store.js';
import { createFakeRuntime } from '../../../src/testing/fake-runtime.js';

/** The memory store, claiming like PostgreSQL: due, open, unleased or ended by `clock.now`, one per scope. */
function claimingStore(now: () => number, clock: { now: number }) {
  const inner = memoryStore({ now });
  /** Lease ends on the store's clock, for leases it granted; any other lease is live. */
  const ends = new Map<string, number>();
  const limits: number[] = [];
  const claimDue = async (request: ClaimRequest): Promise<OperationRecord[]> => {
    limits.push(request.limit);
    const open = await inner.list({ state: ['pending', 'in_flight'] });
    const headSeen = new Set<string>();
    const claimed: OperationRecord[] = [];
    for (const r of open.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))) {
      const isHead = request.keys?.includes(r.key) ?? (r.scope === undefined || !headSeen.has(r.scope));
      if (r.scope !== undefined) headSeen.add(r.scope);
      const free = r.lease === undefined || (ends.get(r.key) ?? Number.POSITIVE_INFINITY) <= clock.now;
      if (!isHead || !free || r.nextAttemptAt > request.dueBy || claimed.length >= request.limit) continue;
      const next = {
        ...r,
        epoch: r.epoch + 1,
        lease: { owner: request.owner, until: request.nowMs + request.leaseMs },
      };
      await inner.put(next);
      ends.set(r.key, clock.now + request.leaseMs);
      claimed.push(next);
    }
    return claimed;
  };
  const store: OperationStore = Object.assign(Object.create(inner) as OperationStore, { claimDue });
  return { store, limits, ends };
}

const ok = () => new Response('{"id":"p"}', { status: 201, headers: { 'content-type': 'application/json' } });

describe('resume() on a store that claims on its own clock', () => {
  it('asks for its free slots and a small prefetch, never sends more than its slots, claims again as they free, and drives all', async () => {
    const rt = createFakeRuntime();
    const { store, limits } = claimingStore(rt.now, { now: 0 });
    for (let i = 0; i < 7; i++) {
      await store.put(
        sampleRecord(`k${i}`, { seq: i, createdAt: rt.now(), nextAttemptAt: 0, deadlineAt: rt.now() + 3_600_000 }),
      );
    }
    let inFlight = 0;
    let most = 0;
    const client = createClient({
      store,
      runtime: rt,
      concurrency: 3,
      fetch: async () => {
        most = Math.max(most, ++inFlight);
        // A few turns of the event loop on the wire (virtual time does not move while a request is out).
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return ok();
      },
    });
    const summary = await rt.run(client.resume());
    expect(summary).toMatchObject({ driven: 7, succeeded: 7 });
    expect(most).toBe(3);
    expect(prefetchOf(3)).toBe(1);
    expect(limits[0]).toBe(4);
    expect(limits.every((n) => n >= 1 && n <= 4)).toBe(true);
    // The last claim found nothing: that is how the pass knew it was done.
    expect(limits.length).toBeGreaterThan(2);
    await client.close();
  });

  it('a failed claim ends the pass with its error, after driving what it had claimed ahead', async () => {
    const rt = createFakeRuntime();
    const { store, limits } = claimingStore(rt.now, { now: 0 });
    for (let i = 0; i < 9; i++) {
      await store.put(
        sampleRecord(`k${i}`, { seq: i, createdAt: rt.now(), nextAttemptAt: 0, deadlineAt: rt.now() + 3_600_000 }),
      );
    }
    const claimDue = store.claimDue?.bind(store);
    let calls = 0;
    store.claimDue = async (request) => {
      if (++calls > 1) throw new Error('connection lost');
      return (await claimDue?.(request)) ?? [];
    };
    const sent: string[] = [];
    const client = createClient({
      store,
      runtime: rt,
      concurrency: 5,
      fetch: async (input, init) => {
        sent.push(new Headers(init?.headers).get('idempotency-key') ?? String(input));
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        return ok();
      },
    });
    await expect(rt.run(client.resume())).rejects.toThrow('connection lost');
    // The first claim took 5 slots + 2 ahead. When a slot freed, one of those 2 started and the next claim
    // (failing) went out with the other still waiting: it is sent too, not left to its lease. Each once.
    expect(prefetchOf(5)).toBe(2);
    expect(limits).toEqual([7]);
    expect(sent).toHaveLength(7);
    expect(new Set(sent).size).toBe(7);
    const open = await store.list({ state: ['pending', 'in_flight'] });
    expect(open.map((r) => r.key).sort()).toEqual(['k7', 'k8']);
    await client.close();
  });

  it('leaves an operation another owner holds until the store says its lease ended, whatever the client clock says', async () => {
    const rt = createFakeRuntime();
    const clock = { now: 0 };
    const { store, ends } = claimingStore(rt.now, clock);
    // Written by owner x (who may not send it here), then held by x: its lease ended long ago by any client clock.
    const request = { method: 'POST', url: 'https://api.example.test/payments', key: 'held', json: { amount: 1 } };
    const writer = createClient({ store, runtime: rt, owner: 'x', mayAttempt: () => false, fetch: async () => ok() });
    await writer.enqueue(request);
    await writer.close();
    await store.update('held', (r) => r && { ...r, lease: { owner: 'x', until: rt.now() - 1 } });
    ends.set('held', 60_000);
    let requests = 0;
    const client = createClient({
      store,
      runtime: rt,
      fetch: async () => {
        requests++;
        return ok();
      },
    });
    expect((await rt.run(client.resume())).driven).toBe(0);
    // A second send of the same key waits for the owner (or the store's word), sending nothing meanwhile.
    const joined = client.send(request);
    await rt.advance(300);
    expect(requests).toBe(0);
    expect((await store.get('held'))?.lease?.owner).toBe('x');
    // The store's clock passes the lease: the waiting send takes it over through claimDue.
    clock.now = 60_000;
    expect((await rt.run(joined)).status).toBe(201);
    expect(requests).toBe(1);
    expect((await store.get('held'))?.state).toBe('succeeded');
    await client.close();
  });
});
