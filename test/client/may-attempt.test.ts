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
});
