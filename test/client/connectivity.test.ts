/**
 * Offline waiting (a platform connectivity signal) and scope ordering.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Connectivity } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

function switchable(initial: boolean): Connectivity & { set(online: boolean): void } {
  let online = initial;
  const listeners = new Set<() => void>();
  return {
    online: () => online,
    onOnline(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    set(value) {
      online = value;
      if (value) for (const fn of [...listeners]) fn();
    },
  };
}

describe('connectivity', () => {
  it('while offline nothing is sent and no attempt is counted; back online, all complete once', async () => {
    const net = switchable(false);
    const h = await harness({ connectivity: net, policy: { deadlineMs: 3_600_000 } });
    const queued = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.client.enqueue({ method: 'POST', url: '/payments', key: `off${i}`, json: { i } }),
      ),
    );
    await h.rt.advance(60_000);
    expect(h.server.ledger.requests).toHaveLength(0);
    for (const { key } of queued) expect((await h.client.get(key))?.attempts).toHaveLength(0);
    net.set(true);
    const outcomes = await h.rt.run(Promise.all(queued.map((q) => q.settled)));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(h.server.ledger.totalEffects()).toBe(10);
    expect(outcomes.every((o) => o.record?.attempts.length === 1)).toBe(true);
  });

  it('an operation still offline at its deadline fails without an attempt', async () => {
    const h = await harness({ connectivity: switchable(false), policy: { deadlineMs: 5_000 } });
    const { settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'never', json: {} });
    const outcome = await h.rt.run(settled);
    expect(outcome).toMatchObject({ state: 'failed', ok: false });
    expect(outcome.record?.failure?.reason).toBe('deadline');
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});

describe('scopes', () => {
  it('operations of one scope are sent in creation order, one at a time; resume keeps that order', async () => {
    const h = await harness({ policy: { backoff: { jitter: 'none', baseDelayMs: 1_000 } } });
    // The first one needs a retry: the later ones of its scope must wait for it.
    h.server.script({ kind: 'status', status: 503, match: { key: 's1' } });
    const queued = [];
    for (const key of ['s1', 's2', 's3'])
      queued.push(await h.client.enqueue({ method: 'POST', url: '/orders', key, scope: 'cart-9', json: { key } }));
    const other = await h.client.enqueue({ method: 'POST', url: '/orders', key: 'free', json: {} });
    await h.rt.run(Promise.all([...queued.map((q) => q.settled), other.settled]));
    const order = h.server.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.key);
    expect(order.filter((k) => k !== 'free')).toEqual(['s1', 's2', 's3']);
    // The unscoped one did not wait for the scope.
    expect(order.indexOf('free')).toBeLessThan(order.indexOf('s1'));
  });
});

describe('resume order', () => {
  it('earliest due first, but each scope keeps its creation order', async () => {
    const { orderForResume } = await import('../../src/flow/calls/resume-order.js');
    const { sampleRecord } = await import('../../src/store.js');
    const records = [
      sampleRecord('a1', { scope: 'a', createdAt: 1, nextAttemptAt: 500 }),
      sampleRecord('free', { createdAt: 2, nextAttemptAt: 50 }),
      sampleRecord('a2', { scope: 'a', createdAt: 3, nextAttemptAt: 100 }),
      sampleRecord('b1', { scope: 'b', createdAt: 4, nextAttemptAt: 300 }),
      sampleRecord('late', { createdAt: 5, nextAttemptAt: 900 }),
    ];
    const { writeOrder } = await import('../../src/model.js');
    orderForResume(records, writeOrder);
    expect(records.map((r) => r.key)).toEqual(['free', 'a1', 'b1', 'a2', 'late']);
  });
});
