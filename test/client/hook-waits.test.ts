/**
 * A wait for a user hook (`onUnauthorized` after a 401, the `headers`
 * callback before an attempt) ended by the client closing or the caller's
 * abort is not the hook failing: a closing client leaves the operation
 * pending, lease released, for the next owner; an abort ends it `aborted`,
 * as every other abort does. Only the deadline is held against the hook.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AttemptContext } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

/** A hook that never answers, and a promise of its first call. */
function pendingHook<T>(): { hook: (ctx: AttemptContext) => Promise<T>; called: Promise<void> } {
  let called!: () => void;
  return {
    hook: () => {
      called();
      return new Promise<T>(() => undefined);
    },
    called: new Promise<void>((resolve) => {
      called = resolve;
    }),
  };
}

describe('onUnauthorized still pending', () => {
  it('when the client closes: the operation stays pending, lease released, and the next owner completes it', async () => {
    const refresh = pendingHook<void>();
    const h = await harness({ onUnauthorized: refresh.hook });
    h.server.script({ kind: 'status', status: 401 });
    const caller = h.client.send({ method: 'POST', url: '/payments', key: 'u1', json: {} }).catch((e: unknown) => e);
    await h.rt.run(refresh.called);
    await h.client.close();
    const stored = await h.store.get('u1');
    expect(stored).toMatchObject({ state: 'pending' });
    expect(stored?.lease).toBeUndefined();
    expect(stored?.failure).toBeUndefined();
    expect(stored?.attempts.map((a) => a.status)).toEqual([401]);
    // The caller is told the operation is stored and will be resumed, not that it is blocked.
    expect(await caller).toMatchObject({ message: expect.stringMatching(/client closed.*pending/) });
    const next = h.another();
    expect(await h.rt.run(next.resume())).toMatchObject({ driven: 1, succeeded: 1 });
    expect(h.server.ledger.effectCount('u1')).toBe(1);
  });

  it('and the next owner, meeting a 401 too, gets its own refresh (the first never finished)', async () => {
    const refresh = pendingHook<void>();
    const h = await harness({ onUnauthorized: refresh.hook });
    h.server.script({ kind: 'status', status: 401 }, { kind: 'status', status: 401 });
    const caller = h.client.send({ method: 'POST', url: '/payments', key: 'u3', json: {} }).catch((e: unknown) => e);
    await h.rt.run(refresh.called);
    await h.client.close();
    await caller;
    let refreshed = 0;
    const next = h.another({
      onUnauthorized: () => {
        refreshed++;
      },
    });
    expect(await h.rt.run(next.resume())).toMatchObject({ driven: 1, succeeded: 1 });
    expect(refreshed).toBe(1);
    expect(h.server.ledger.requestsFor('u3')).toHaveLength(3);
    expect(h.server.ledger.effectCount('u3')).toBe(1);
  });

  it("on the caller's abort: ends aborted (the 401 took no effect: failed), not blocked", async () => {
    const refresh = pendingHook<void>();
    const h = await harness({ onUnauthorized: refresh.hook });
    h.server.script({ kind: 'status', status: 401 });
    const controller = new AbortController();
    const caller = h.client
      .send({ method: 'POST', url: '/payments', key: 'u2', json: {}, signal: controller.signal })
      .catch((e: unknown) => e);
    await h.rt.run(refresh.called);
    const abortedAt = h.rt.now();
    controller.abort();
    const error = await h.rt.run(caller);
    expect((error as DOMException).name).toBe('AbortError');
    expect(error).toMatchObject({ key: 'u2', state: 'failed', reason: 'aborted', mayHaveTakenEffect: false });
    // At once, not at the deadline.
    expect(h.rt.now()).toBe(abortedAt);
    expect(await h.store.get('u2')).toMatchObject({ state: 'failed', failure: { reason: 'aborted' } });
    expect(h.server.ledger.requestsFor('u2')).toHaveLength(1);
  });
});

describe('the headers callback still pending', () => {
  it('when the client closes: no attempt is recorded, the operation stays pending, lease released', async () => {
    const credentials = pendingHook<Record<string, string>>();
    const h = await harness({ headers: credentials.hook });
    const caller = h.client.send({ method: 'POST', url: '/payments', key: 'h1', json: {} }).catch((e: unknown) => e);
    await h.rt.run(credentials.called);
    await h.client.close();
    const stored = await h.store.get('h1');
    expect(stored).toMatchObject({ state: 'pending', attempts: [], backoff: { retries: 0 } });
    expect(stored?.lease).toBeUndefined();
    expect(await caller).toMatchObject({ message: expect.stringMatching(/client closed.*pending/) });
    const next = h.another({ headers: () => ({ authorization: 'Bearer t' }) });
    expect(await h.rt.run(next.resume())).toMatchObject({ driven: 1, succeeded: 1 });
    expect(h.server.ledger.effectCount('h1')).toBe(1);
  });

  it("on the caller's abort: ends aborted at once, with no attempt recorded", async () => {
    const credentials = pendingHook<Record<string, string>>();
    const h = await harness({ headers: credentials.hook, policy: { deadlineMs: 60_000 } });
    const controller = new AbortController();
    const caller = h.client
      .send({ method: 'POST', url: '/payments', key: 'h2', json: {}, signal: controller.signal })
      .catch((e: unknown) => e);
    await h.rt.run(credentials.called);
    const abortedAt = h.rt.now();
    controller.abort();
    const error = await h.rt.run(caller);
    expect(error).toMatchObject({ key: 'h2', state: 'failed', reason: 'aborted', mayHaveTakenEffect: false });
    // Not at the deadline (60 s later), and no unsent attempt blamed on the callback.
    expect(h.rt.now()).toBe(abortedAt);
    expect((await h.store.get('h2'))?.attempts).toEqual([]);
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});
