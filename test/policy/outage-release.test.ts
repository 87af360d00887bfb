/**
 * One client, a host answering 503 + Retry-After: 1 for 10 s (issue 33, P3),
 * on virtual time with a stand-in host: what the gate does once the host is
 * back. Its first success releases everyone waiting, the held and those
 * waiting out their own backoff, by a ramp that takes a few steps of 25 ms
 * on a host that serves, and that stops before it floods a host only half
 * back.
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client.js';
import { memoryStore } from '../../src/store/memory.js';
import { createFakeRuntime, type FakeRuntime } from '../../src/testing/fake-runtime.js';

/** Fewer than the benchmark's 200 (the unit tier is kept fast); enough to open the gate and fill a ramp. */
const OPERATIONS = 60;
const URL_ = 'https://api.example.test/payments';

interface Host {
  fetch: typeof globalThis.fetch;
  /** Requests answered 503 before the recovery. */
  duringOutage: number;
  /** Requests answered 503 after it, for want of capacity. */
  turnedAway: number;
  /** Requests served per 100 ms after the recovery. */
  servedPerBin: Map<number, number>;
}

/** 503 + Retry-After: 1 until `recoverAtMs`; then at most `perBin` requests served per 100 ms for `limitedMs`. */
function outageHost(rt: FakeRuntime, recoverAtMs: number, perBin = Number.POSITIVE_INFINITY, limitedMs = 0): Host {
  const unavailable = () => new Response('busy', { status: 503, headers: { 'retry-after': '1' } });
  const host: Host = {
    duringOutage: 0,
    turnedAway: 0,
    servedPerBin: new Map(),
    fetch: async () => {
      const now = rt.now();
      if (now < recoverAtMs) {
        host.duringOutage++;
        return unavailable();
      }
      const bin = Math.floor((now - recoverAtMs) / 100);
      const served = host.servedPerBin.get(bin) ?? 0;
      if (now < recoverAtMs + limitedMs && served >= perBin) {
        host.turnedAway++;
        return unavailable();
      }
      host.servedPerBin.set(bin, served + 1);
      return new Response('{"id":"p"}', { status: 201, headers: { 'content-type': 'application/json' } });
    },
  };
  return host;
}

async function outage(outageMs: number, perBin?: number, limitedMs?: number) {
  const rt = createFakeRuntime({ seed: 1 });
  const recoverAt = rt.now() + outageMs;
  const host = outageHost(rt, recoverAt, perBin, limitedMs);
  const client = createClient({ runtime: rt, fetch: host.fetch, store: memoryStore({ now: rt.now }) });
  let lastDoneAt = 0;
  client.on('settled', () => {
    lastDoneAt = rt.now();
  });
  const enqueued = await Promise.all(
    Array.from({ length: OPERATIONS }, (_, i) =>
      client.enqueue({ method: 'POST', url: URL_, key: `op${i}`, json: { i } }),
    ),
  );
  const outcomes = await rt.run(Promise.all(enqueued.map((e) => e.settled)));
  await client.close();
  return { host, done: outcomes.filter((o) => o.ok).length, lastDoneAfterMs: lastDoneAt - recoverAt };
}

describe('after a 503 storm, the first success releases every waiting operation', () => {
  // 10.45 s: the recovery falls just after a failed probe, so the next probe (after Retry-After) notices
  // it late: the worst case of noticing, about 1 s.
  for (const outageMs of [10_000, 10_450]) {
    it(`every operation done within 1.2 s of recovery (outage ${outageMs} ms)`, async () => {
      const { host, done, lastDoneAfterMs } = await outage(outageMs);
      expect(done).toBe(OPERATIONS);
      // The first attempts, the budget's 10 retries and about a probe a second, no more (the ratio to
      // first attempts is checked with 200 operations in test/client/outage.test.ts).
      expect(host.duringOutage).toBeLessThanOrEqual(OPERATIONS + 10 + 11);
      // Before: the held came back over a 500 ms spread, and the last probes, waiting out their own
      // backoff (2–3 s after their failure), up to 2.4 s after the host did.
      expect(lastDoneAfterMs).toBeLessThanOrEqual(1_200);
    });
  }

  it('a host only half back (for 3 s, half the rate of the old spread) is not flooded by the release', async () => {
    // The old spread sent 60 operations over 500 ms: 12 per 100 ms. This host serves 6.
    const { host, done, lastDoneAfterMs } = await outage(10_000, 6, 3_000);
    expect(done).toBe(OPERATIONS);
    // Before: the spread sent its slots whatever the answers (26 turned away), and those turned away came
    // back each after its own backoff (the last 7 s after recovery). Now the first failure stops the ramp,
    // and the next probe (after Retry-After) starts it again: 9 turned away, the last done at 3.6 s.
    expect(host.turnedAway).toBeLessThanOrEqual(12);
    expect(lastDoneAfterMs).toBeLessThanOrEqual(5_000);
  });
});
