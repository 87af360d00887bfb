/**
 * The retry budget and the host gate during a full outage: 200 operations
 * against a server that answers 503 + Retry-After: 1 for 10 s of virtual
 * time, then recovers. Load must stay near the first-attempt traffic AND
 * every operation must finish soon after recovery: both at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/testing.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

const OPERATIONS = 200;
const OUTAGE_MS = 10_000;

describe('outage: budget + gate', () => {
  it('keeps outage load ≤ 1.2× first attempts and finishes every operation within 1.2 s of recovery', async () => {
    const h = await harness({ policy: { deadlineMs: 60_000 } });
    const start = h.rt.now();
    const recoveredAt = start + OUTAGE_MS;
    h.server.setOutage({ status: 503, retryAfter: 1, until: recoveredAt });
    const enqueued = await Promise.all(
      Array.from({ length: OPERATIONS }, (_, i) =>
        h.client.enqueue({ method: 'POST', url: '/payments', key: `op${i}`, json: { i } }),
      ),
    );
    const outcomes = await h.rt.run(Promise.all(enqueued.map((e) => e.settled)));

    const duringOutage = h.server.ledger.requests.filter((r) => r.at < recoveredAt).length;
    const lastEffectAt = Math.max(...h.server.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.at));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(h.server.ledger.totalEffects()).toBe(OPERATIONS);
    expect(duringOutage).toBeGreaterThanOrEqual(OPERATIONS);
    expect(duringOutage).toBeLessThanOrEqual(OPERATIONS * 1.2);
    // The target is 2 s; the gate's first success releases everyone waiting (the held and those in their own
    // backoff) by a ramp of a few 25 ms steps, so noticing (≤ ~1.1 s after Retry-After: 1) is nearly all of it.
    expect(lastEffectAt - recoveredAt).toBeLessThanOrEqual(1_200);
    // Held operations were reported as such.
    expect(h.events.some((e) => e.name === 'held')).toBe(true);
  });

  it('without the gate (budget: false) the same outage multiplies the load', async () => {
    // Fewer operations than above: the point is the ratio, and every one of the
    // many retries is a real request (virtual time waits for each).
    const operations = 50;
    const h = await harness({ policy: { deadlineMs: 60_000, budget: false, maxAttempts: 20 } });
    h.server.setOutage({ status: 503, retryAfter: 1, until: h.rt.now() + OUTAGE_MS });
    const enqueued = await Promise.all(
      Array.from({ length: operations }, (_, i) =>
        h.client.enqueue({ method: 'POST', url: '/payments', key: `op${i}`, json: { i } }),
      ),
    );
    await h.rt.run(Promise.all(enqueued.map((e) => e.settled)));
    const duringOutage = h.server.ledger.requests.filter((r) => r.outcome === 'outage').length;
    expect(duringOutage).toBeGreaterThan(operations * 3);
  });

  it('jitter on top of Retry-After spreads separate clients instead of one wave', async () => {
    const h = await harness({ policy: { deadlineMs: 60_000 } });
    h.server.setOutage({ status: 503, retryAfter: 1, until: h.rt.now() + 3_000 });
    // 50 separate clients (as 50 browsers), one operation each, each with its own seed.
    const clients = Array.from({ length: 50 }, (_, i) =>
      h.another({ runtime: { ...h.rt, random: seededRandom(i + 1) } }),
    );
    const enqueued = await Promise.all(
      clients.map((c, i) => c.enqueue({ method: 'POST', url: '/payments', key: `c${i}`, json: { i } })),
    );
    await h.rt.run(Promise.all(enqueued.map((e) => e.settled)));
    const retries = h.server.ledger.requests.filter((r) => r.at > h.server.ledger.requests[0]!.at);
    const perMs = new Map<number, number>();
    for (const r of retries) perMs.set(r.at, (perMs.get(r.at) ?? 0) + 1);
    // No single instant carries more than a handful of the 50 returning clients.
    expect(Math.max(...perMs.values())).toBeLessThanOrEqual(5);
  });
});
