/**
 * The `mayAttempt` option: asked before every attempt, after every wait.
 * When it says no, nothing is sent, the lease is given back and the
 * operation stays pending; a caller waiting on it keeps waiting, looking
 * again each poll, until it may go.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, InvalidOptionsError, type OperationRecord } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('mayAttempt', () => {
  it('must be a function', () => {
    expect(() => createClient({ mayAttempt: true as unknown as () => boolean })).toThrow(InvalidOptionsError);
    expect(() => createClient({ mayAttempt: true as unknown as () => boolean })).toThrow(/mayAttempt/);
  });

  it('no: nothing is sent, not even the first attempt, and the lease is given back; yes: it goes once', async () => {
    let open = false;
    const asked: string[] = [];
    const h = await harness({
      mayAttempt: (record: OperationRecord) => {
        asked.push(record.key);
        return open;
      },
    });
    const { key, settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'm1', json: {} });
    await h.rt.advance(5_000);
    expect(h.server.ledger.requests).toHaveLength(0);
    const held = await h.store.get(key);
    expect(held).toMatchObject({ state: 'pending', attempts: [] });
    expect(held?.lease).toBeUndefined();
    // Looked at once per poll (a second), not in a loop.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThan(30);
    open = true;
    expect((await h.rt.run(settled)).ok).toBe(true);
    expect(h.server.ledger.effectCount('m1')).toBe(1);
  });

  it('a no during a retry delay stops the retry; the operation keeps its history', async () => {
    let open = true;
    const h = await harness({ mayAttempt: () => open, policy: { backoff: { jitter: 'none', baseDelayMs: 1_000 } } });
    h.server.script({ kind: 'status', status: 503 });
    const scheduled = new Promise<void>((resolve) => h.client.on('retry:scheduled', () => resolve()));
    const { settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'm2', json: {} });
    await h.rt.run(scheduled);
    open = false;
    await h.rt.advance(10_000);
    expect(h.server.ledger.requestsFor('m2')).toHaveLength(1);
    const held = await h.store.get('m2');
    expect(held?.state).toBe('pending');
    expect(held?.lease).toBeUndefined();
    expect(held?.attempts).toHaveLength(1);
    open = true;
    expect((await h.rt.run(settled)).ok).toBe(true);
    expect(h.server.ledger.requestsFor('m2')).toHaveLength(2);
    expect(h.server.ledger.effectCount('m2')).toBe(1);
  });

  it('a no while the host gate holds the operation: nothing is sent, and the gate is not left shut for the next one', async () => {
    const blocked = new Set<string>();
    const h = await harness({
      mayAttempt: (record: OperationRecord) => !blocked.has(record.key),
      policy: { budget: { capacity: 1, ratio: 0.1, probeIntervalMs: 10_000 }, backoff: { jitter: 'none' } },
    });
    h.server.setOutage({ status: 503 });
    const held = new Promise<void>((resolve) => h.client.on('held', () => resolve()));
    await h.client.enqueue({ method: 'POST', url: '/payments', key: 'g1', json: {} });
    await h.rt.run(held);
    const sent = h.server.ledger.requestsFor('g1').length;
    blocked.add('g1');
    // The gate's hold ends: g1 may not go now.
    await h.rt.advance(15_000);
    expect(h.server.ledger.requestsFor('g1')).toHaveLength(sent);
    expect((await h.store.get('g1'))?.state).toBe('pending');
    // The probe went back: the host recovers, and the next operation's retry goes out as the probe at once.
    h.server.setOutage(undefined);
    h.server.script({ kind: 'status', status: 503, match: { key: 'g2' } });
    const g2 = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'g2', json: {} });
    expect(await h.rt.run(g2.settled)).toMatchObject({ ok: true });
    expect(h.server.ledger.effectCount('g2')).toBe(1);
  });

  it('a check that throws lets nothing go (held back, looked at again), never an untyped error', async () => {
    let broken = true;
    const h = await harness({
      mayAttempt: () => {
        if (broken) throw new Error('user() failed');
        return true;
      },
    });
    const { settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 't1', json: {} });
    await h.rt.advance(5_000);
    expect(h.server.ledger.requests).toHaveLength(0);
    expect((await h.store.get('t1'))?.state).toBe('pending');
    broken = false;
    expect((await h.rt.run(settled)).ok).toBe(true);
  });
});
