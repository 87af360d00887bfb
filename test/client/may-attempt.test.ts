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
    expect(await h.rt.run(g2.settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect(h.server.ledger.effectCount('g2')).toBe(1);
  });

  it('a no that comes while the operation waits for the gate is heard at its admission: no credentials are fetched, the probe goes back at once', async () => {
    // The browser's case: operations belong to a user; `headers` fetches a
    // token for the operation's user, which, once that user signed out, only
    // a new sign-in gives (an interactive login).
    let user = 'ann';
    /** Token requests waiting for their user to sign in again, by user. */
    const waiting = new Map<string, Array<() => void>>();
    const signIn = (who: string): void => {
      user = who;
      const resumes = waiting.get(who) ?? [];
      waiting.delete(who);
      for (const resume of resumes) resume();
    };
    const tokenFor = async (who: string): Promise<string> => {
      if (who !== user) await new Promise<void>((resume) => waiting.set(who, [...(waiting.get(who) ?? []), resume]));
      return `token-of-${who}`;
    };
    /** Which operation a token was asked for, and who was signed in then. */
    const asked: Array<{ key: string; user: string }> = [];
    const h = await harness({
      mayAttempt: (record: OperationRecord) => record.meta?.user === user,
      headers: async (ctx) => {
        asked.push({ key: ctx.key, user });
        return { authorization: `Bearer ${await tokenFor(String(ctx.meta?.user))}` };
      },
      policy: {
        budget: { capacity: 1, ratio: 0.1, probeIntervalMs: 10_000 },
        backoff: { jitter: 'none', baseDelayMs: 1_000 },
      },
    });
    h.server.setOutage({ status: 503 });
    const heldUntil = new Promise<number>((resolve) => h.client.on('held', (e) => resolve(e.untilMs)));
    const g1 = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'g1', json: {}, meta: { user: 'ann' } });
    // The budget ran dry and the gate is open: g1 waits for the gate until the next probe time.
    const probeAt = await h.rt.run(heldUntil);
    const sent = h.server.ledger.requestsFor('g1').length;
    expect(sent).toBeGreaterThan(0);

    // While g1 waits for the gate, ann signs out and bob signs in.
    signIn('bob');
    const askedBefore = asked.length;
    // The gate admits g1 as its probe: g1 may not go now.
    await h.rt.advance(probeAt - h.rt.now());
    expect(asked.slice(askedBefore)).toEqual([]);
    expect(h.server.ledger.requestsFor('g1')).toHaveLength(sent);
    const released = await h.store.get('g1');
    expect(released).toMatchObject({ state: 'pending' });
    expect(released?.lease).toBeUndefined();

    // The probe went back at once: bob's operation's retry goes out as the next probe, never held.
    h.server.setOutage(undefined);
    h.server.script({ kind: 'status', status: 503, match: { key: 'g2' } });
    const heldBefore = h.events.filter((e) => e.name === 'held').length;
    const g2 = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'g2', json: {}, meta: { user: 'bob' } });
    expect(await h.rt.run(g2.settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect(h.events.filter((e) => e.name === 'held')).toHaveLength(heldBefore);
    expect(h.server.ledger.requestsFor('g2')).toHaveLength(2);
    expect(h.server.ledger.requestsFor('g1')).toHaveLength(sent);

    // Ann signs in again: g1 goes under its key and takes effect once; its token was only ever asked for as ann.
    signIn('ann');
    expect(await h.rt.run(g1.settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect(h.server.ledger.requestsFor('g1')).toHaveLength(sent + 1);
    expect(h.server.ledger.effectCount('g1')).toBe(1);
    expect(asked.filter((a) => a.key === 'g1' && a.user !== 'ann')).toEqual([]);
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
