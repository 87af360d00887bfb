/**
 * The browser client, instrumented in two tabs (fake tabs sharing one store
 * and Web Locks, a real reference server, virtual time): the tab that writes
 * an operation ahead stores its span's context; the drainer tab, which sends
 * it, traces it as a span linked to that context.
 */
import 'fake-indexeddb/auto';
import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createBrowserClient, memoryStore } from '../../src/browser.js';
import { instrument } from '../../src/opentelemetry.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { fakeOrigin } from '../browser-unit/fakes.js';
import { tracing } from './tracing.js';

const t = tracing();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('instrumented browser tabs', () => {
  it('the follower writes ahead inside its span; the drainer sends it, linked to that span', async () => {
    const rt = createFakeRuntime({ seed: 11 });
    const server = await startReferenceServer({ runtime: rt });
    const store = memoryStore({ now: rt.now });
    const origin = fakeOrigin(rt.track);
    const open = () =>
      createBrowserClient({
        baseUrl: server.url,
        store,
        database: 'otel-tabs',
        runtime: rt,
        fetch: rt.fetch,
        env: origin.tab().env,
        drainIntervalMs: 1_000,
        settlePollMs: 500,
        endpoints: { 'POST /payments': {} },
      });
    const drainer = open();
    const follower = open();
    cleanups.push(async () => {
      await Promise.all([drainer.close(), follower.close()]);
      await server.close();
    });
    await rt.run(drainer.ready);
    instrument(drainer, { tracer: t.tracer });
    instrument(follower, { tracer: t.tracer });

    const parent = t.tracer.startSpan('pay button');
    const { settled } = await context.with(trace.setSpan(context.active(), parent), () =>
      follower.enqueue({ method: 'POST', url: '/payments', key: 'tab1', json: { amount: 5 } }),
    );
    parent.end();
    expect(await rt.run(settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect(drainer.status()).toMatchObject({ leader: true });

    // One operation span, the drainer's: linked to the follower's span, with its one CLIENT span.
    const op = t.operation('tab1');
    expect(op.links.map((l) => l.context.spanId)).toEqual([parent.spanContext().spanId]);
    expect(op.attributes).toMatchObject({ 'oncely.resumed': true, 'oncely.state': 'succeeded' });
    expect(t.attempts(op)).toHaveLength(1);
    expect(server.ledger.effectCount('tab1')).toBe(1);
  });
});
