/**
 * A holder paused between its durable "attempt started" and the send (a
 * SIGSTOP, a debugger, a laptop lid) past its lease is fenced: its writes
 * are refused. It must not send either: it checks its lease on its own
 * monotonic clock right before the bytes leave, and gives the attempt back
 * unsent when the lease no longer covers it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { claim as claimWith } from '../../src/flow/decide/claim.js';
import { CLAIM_KIT } from '../../src/flow/decide/transitions.js';
import type { Runtime } from '../../src/runtime.js';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';

/** The claim (claim.ts), handed what it uses of transitions.ts as the loop hands it. */
const claim = (...args: Parameters<typeof claimWith> extends [unknown, ...infer R] ? R : never) =>
  claimWith(CLAIM_KIT, ...args);

afterEach(closeAll);

describe('a holder paused after recording its attempt as started', () => {
  it('sends nothing once its lease no longer covers the attempt, and another owner finishes with the same key', async () => {
    const h = await harness({ owner: 'unused' });
    const inner = h.store;
    // A's monotonic clock, which jumps when A is frozen (the fake runtime's own cannot pause one client alone).
    let frozenMs = 0;
    const aRuntime: Runtime = { ...h.rt, monotonicNow: () => h.rt.monotonicNow() + frozenMs };
    let freezes = 1;
    let tookOver = (): void => undefined;
    const takenOver = new Promise<void>((resolve) => {
      tookOver = resolve;
    });
    const frozenOnce = forwardingStore(inner, {
      update: async (key, fn, options) => {
        const written = await inner.update(key, fn, options);
        const last = written?.attempts[written.attempts.length - 1];
        if (freezes > 0 && last?.endedAt === undefined && written?.lease?.owner === 'A') {
          freezes--;
          // A is frozen for 30 s right after its attempt's start became durable; meanwhile B took the operation
          // over (its lease watch ran out), exactly as B's claim would write it.
          frozenMs += 30_000;
          await inner.update(key, (r) => claim(r, key, { id: 'B', leaseMs: 60_000 }, h.rt.now(), () => true));
          tookOver();
        }
        return written;
      },
    });
    const policy = { attemptTimeoutMs: 3_000 };
    const a = h.another({ owner: 'A', store: frozenOnce, runtime: aRuntime, leaseMs: 2_000, policy });
    const aAttempts: unknown[] = [];
    a.on('attempt:started', (e) => aAttempts.push(e.attempt));
    const sending = a.send({ method: 'POST', url: '/payments', key: 'frozen1', json: { amount: 1 } });
    await h.rt.run(takenOver);
    const b = h.another({ owner: 'B', leaseMs: 2_000, policy });
    const [aResult, bSummary] = await h.rt.run(Promise.all([sending, b.resume()]));
    expect(bSummary).toMatchObject({ succeeded: 1 });
    expect(aResult.status).toBe(201);
    // A woke up, found its lease spent, and sent nothing: the one request is B's, under the same key.
    expect(aAttempts).toEqual([1]);
    expect(h.server.ledger.requestsFor('frozen1')).toHaveLength(1);
    expect(h.server.ledger.effectCount('frozen1')).toBe(1);
  });
});
