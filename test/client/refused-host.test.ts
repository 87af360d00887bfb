/**
 * A Node queue notices that the API is back (issue 32, item 3). While the
 * host refuses connections, its gate lets one probe through at a time,
 * 500–600 ms apart; the first answer releases every waiting operation
 * at once. Real refused connections (a closed port on 127.0.0.1) and a real
 * server after recovery; virtual time throughout.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

/** A port on 127.0.0.1 that nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const OPERATIONS = 50;
const OUTAGE_MS = 15_000;

describe('a host that refuses connections is probed, not retried by every operation', () => {
  it('one probe per host every 500–600 ms; its first success finishes every operation within 2 s', async () => {
    const port = await closedPort();
    /** Virtual times of the attempts that met the refusing host. */
    const refusedAt: number[] = [];
    let recoveredAt = Number.POSITIVE_INFINITY;
    const h = await harness({
      policy: { deadlineMs: 120_000 },
      fetch: (input, init) => {
        if (h.rt.now() >= recoveredAt) return h.rt.fetch(input, init);
        refusedAt.push(h.rt.now());
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.port = String(port);
        return h.rt.fetch(input instanceof Request ? new Request(url, input) : url, init);
      },
    });
    const start = h.rt.now();
    recoveredAt = start + OUTAGE_MS;
    const enqueued = await Promise.all(
      Array.from({ length: OPERATIONS }, (_, i) =>
        h.client.enqueue({ method: 'POST', url: '/payments', key: `r${i}`, json: { i } }),
      ),
    );
    const outcomes = await h.rt.run(Promise.all(enqueued.map((e) => e.settled)));

    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(h.server.ledger.totalEffects()).toBe(OPERATIONS);
    // Every operation's first attempt left before anyone knew; after that, one probe at a time.
    const afterFirst = refusedAt.filter((at) => at > start);
    const perSecond = new Map<number, number>();
    for (const at of afterFirst)
      perSecond.set(Math.floor((at - start) / 1000), (perSecond.get(Math.floor((at - start) / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(2);
    // 500–600 ms apart, steady for the first minute: 25 to 30 probes in 15 s, never two within 500 ms.
    expect(afterFirst.length).toBeGreaterThanOrEqual(24);
    expect(afterFirst.length).toBeLessThanOrEqual(30);
    for (let i = 1; i < afterFirst.length; i++) expect(afterFirst[i]! - afterFirst[i - 1]!).toBeGreaterThanOrEqual(500);
    // Recovery is noticed by the next probe (within 600 ms), and every held operation goes at once.
    const effects = h.server.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.at);
    expect(Math.min(...effects)).toBeGreaterThanOrEqual(recoveredAt);
    expect(Math.min(...effects) - recoveredAt).toBeLessThanOrEqual(600);
    expect(Math.max(...effects) - recoveredAt).toBeLessThanOrEqual(2_000);
    // Unsent tries cost nothing: no operation ran out of attempts or budget.
    expect(h.events.some((e) => e.name === 'held')).toBe(true);
  });

  it('without a gate (budget: false) each operation backs off alone and notices late', async () => {
    const port = await closedPort();
    let refused = 0;
    let recoveredAt = Number.POSITIVE_INFINITY;
    const h = await harness({
      policy: { deadlineMs: 120_000, budget: false },
      fetch: (input, init) => {
        if (h.rt.now() >= recoveredAt) return h.rt.fetch(input, init);
        refused++;
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.port = String(port);
        return h.rt.fetch(input instanceof Request ? new Request(url, input) : url, init);
      },
    });
    recoveredAt = h.rt.now() + OUTAGE_MS;
    const enqueued = await Promise.all(
      Array.from({ length: 10 }, (_, i) => h.client.enqueue({ method: 'POST', url: '/p', key: `b${i}`, json: { i } })),
    );
    await h.rt.run(Promise.all(enqueued.map((e) => e.settled)));
    const last = Math.max(...h.server.ledger.requests.map((r) => r.at));
    // The contrast the gate removes: many more connections, and a later finish.
    expect(refused).toBeGreaterThan(10 * 5);
    expect(last - recoveredAt).toBeGreaterThan(2_000);
  });
});

describe('attempts counts what may have reached the server; refused tries are notSent', () => {
  it('a payment the server saw once says attempts 1, however many tries were refused before it', async () => {
    const port = await closedPort();
    let recoveredAt = Number.POSITIVE_INFINITY;
    const h = await harness({
      fetch: (input, init) => {
        if (h.rt.now() >= recoveredAt) return h.rt.fetch(input, init);
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.port = String(port);
        return h.rt.fetch(input instanceof Request ? new Request(url, input) : url, init);
      },
    });
    recoveredAt = h.rt.now() + 3_500;
    const { settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'once', json: {} });
    const outcome = await h.rt.run(settled);
    expect(h.server.ledger.requestsFor('once')).toHaveLength(1);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.result.attempts).toBe(1);
    expect(outcome.result.notSent).toBeGreaterThanOrEqual(3);
    expect(outcome).toMatchObject({ attempts: 1, notSent: outcome.result.notSent });
    const settledEvent = h.events.find((e) => e.name === 'settled')?.payload;
    expect(settledEvent).toMatchObject({ attempts: 1, notSent: outcome.result.notSent });
  });

  it('an operation that never reached the server ends with attempts 0 and its refused tries as notSent', async () => {
    const port = await closedPort();
    const h = await harness({ baseUrl: `http://127.0.0.1:${port}`, policy: { deadlineMs: 5_000 } });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'never', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', attempts: 0, mayHaveTakenEffect: false });
    expect((error as { notSent: number }).notSent).toBeGreaterThanOrEqual(3);
  });
});
