/**
 * Every admission the host gate hands out is given back when its attempt
 * never starts: a probe admitted to an operation past its deadline (a wait
 * that ended late: a throttled tab, a machine waking) or a token admitted to
 * an operation whose start could not be written. Otherwise the gate stays
 * shut (or the budget shrinks) for every later operation to that host.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

/** One gate for the host; a short-lived endpoint and a long-lived one share it. */
const GATED = {
  policy: { budget: { capacity: 1, ratio: 0.1, probeIntervalMs: 10_000 }, backoff: { jitter: 'none' as const } },
  endpoints: { 'POST /short': { deadlineMs: 30_000 }, 'POST /payments': { deadlineMs: 600_000 } },
};

describe('a probe admitted past the deadline', () => {
  it('is given back: the next operation to the host gets the probe and completes', async () => {
    const h = await harness(GATED);
    h.server.setOutage({ status: 503 });
    const late = await h.client.enqueue({ method: 'POST', url: '/short', key: 'late', json: {} });
    // Budget spent and the probe failed: the gate is open and holds `late` until the next probe time.
    await h.rt.run(new Promise<void>((resolve) => h.client.on('held', () => resolve())));
    // The machine sleeps through the deadline: the wall clock jumps, the pending timer fires late.
    h.rt.stepClock(60_000);
    const stopped = await h.rt.run(late.settled);
    // Nothing took effect (every answer was a 503): failed, for lack of budget before the deadline.
    expect(stopped).toMatchObject({ ok: false, state: 'failed' });
    expect(stopped.error).toMatchObject({ reason: 'budget' });
    const sentBefore = h.server.ledger.requests.length;

    // The host recovers, though the next first attempt still meets a 503.
    h.server.setOutage(undefined);
    h.server.script({ kind: 'status', status: 503 });
    const held = h.events.filter((e) => e.name === 'held').length;
    const next = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'next', json: {} });
    const outcome = await h.rt.run(next.settled);
    expect(outcome).toMatchObject({ ok: true, state: 'succeeded' });
    // Its retry went out as the probe at once: never held.
    expect(h.events.filter((e) => e.name === 'held')).toHaveLength(held);
    expect(h.server.ledger.requests.slice(sentBefore).map((r) => r.key)).toEqual(['next', 'next']);
    expect(h.server.ledger.effectCount('next')).toBe(1);
  });
});

describe("a token admitted to an attempt whose start's write fails", () => {
  it('is given back: the next retry to the host passes without opening the gate', async () => {
    const h = await harness();
    let failStarts = false;
    const inner = h.store;
    /** Refuses the write that records an attempt as started, while `failStarts`. */
    const store = forwardingStore(inner, {
      update: (k, fn, options) =>
        inner.update(
          k,
          (current) => {
            const next = fn(current);
            if (failStarts && next?.state === 'in_flight' && current?.state !== 'in_flight') {
              throw new Error('ENOSPC: no space left on device');
            }
            return next;
          },
          options,
        ),
    });
    const client = h.another({ ...GATED, store });
    const held: unknown[] = [];
    client.on('held', (e) => held.push(e));
    // Attempt 1 meets a 503; the retry takes the one token, and its start cannot be written.
    h.server.script({ kind: 'status', status: 503 });
    const first = await client.enqueue({ method: 'POST', url: '/payments', key: 'first', json: {} });
    await h.rt.run(new Promise<void>((resolve) => client.on('retry:scheduled', () => resolve())));
    failStarts = true;
    const failed = await h.rt.run(first.settled);
    expect(failed.ok).toBe(false);
    expect(failed.error?.message).toMatch(/ENOSPC/);
    expect(h.server.ledger.requestsFor('first')).toHaveLength(1);
    failStarts = false;

    // The token is back: the next operation's retry passes (the gate would open and hold it otherwise).
    h.server.script({ kind: 'status', status: 503 });
    const next = await client.enqueue({ method: 'POST', url: '/payments', key: 'next', json: {} });
    expect(await h.rt.run(next.settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect(held).toHaveLength(0);
    expect(h.server.ledger.requestsFor('next')).toHaveLength(2);
  });
});
