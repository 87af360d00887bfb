/**
 * A lease is taken over only on proof (DESIGN.md principle 13): watched
 * unchanged on the taker's own monotonic clock for as long as a live holder
 * could stay silent, plus a margin. A wall clock that says "expired", even
 * by an hour, at the taker's very first look, proves nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/flow/engine/lease-watch.js';
import { sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('a foreign lease and a clock stepped forward', () => {
  it('two owners, the clock an hour ahead before the second one first looks: never two requests of one key at once', async () => {
    const h = await harness({ owner: 'A', leaseMs: 5_000, policy: { attemptTimeoutMs: 10_000 } });
    const hold = h.server.hold({ key: 'step1' });
    const sending = h.client.send({ method: 'POST', url: '/payments', key: 'step1', json: {} });
    await h.rt.run(hold.arrived);
    // The step comes before B has ever seen A's lease: by the wall clock it ended an hour ago.
    h.rt.stepClock(60 * 60_000);
    const b = h.another({ owner: 'B', leaseMs: 5_000 });
    const bAttempts: number[] = [];
    b.on('attempt:started', (e) => bAttempts.push(e.attempt));
    const draining = b.resume({ waitForLeases: true });
    // Less than the attempt timeout plus a lease: A may still be on the wire.
    await h.rt.advance(9_000);
    expect(bAttempts).toEqual([]);
    hold.release();
    expect((await h.rt.run(sending)).status).toBe(201);
    await h.rt.run(draining);
    expect(bAttempts).toEqual([]);
    expect(h.server.ledger.maxConcurrent('step1')).toBe(1);
    expect(h.server.ledger.effectCount('step1')).toBe(1);
  });

  it('a holder that stays silent is taken over once watched for attempt timeout + lease + margin, not before', async () => {
    const h = await harness({ owner: 'B', leaseMs: 2_000, policy: { attemptTimeoutMs: 3_000 } });
    const url = `${h.server.url}/payments`;
    // Another owner's lease that the wall clock says ended long ago (a crashed worker, or a stepped clock).
    const now = h.rt.now();
    await h.store.put(
      sampleRecord('dead1', {
        request: { method: 'POST', url, headers: { 'content-type': 'application/json' } },
        createdAt: now,
        deadlineAt: now + 60_000,
        nextAttemptAt: now,
        epoch: 3,
        lease: { owner: 'gone', until: now - 60 * 60_000 },
      }),
    );
    const first = await h.rt.run(h.client.resume());
    expect(first).toMatchObject({ driven: 0, heldElsewhere: 1 });
    expect(first.heldUntil).toBeGreaterThan(now);
    // The default attempt timeout applies to a record stored without its policy: 10 s + 2 s lease.
    await h.rt.advance(10_000 + 2_000 + TAKEOVER_MARGIN_MS - 10);
    expect(await h.rt.run(h.client.resume())).toMatchObject({ driven: 0, heldElsewhere: 1 });
    expect(h.server.ledger.requestsFor('dead1')).toHaveLength(0);
    await h.rt.advance(10);
    expect(await h.rt.run(h.client.resume())).toMatchObject({ driven: 1, succeeded: 1 });
    expect(h.server.ledger.effectCount('dead1')).toBe(1);
  });
});
