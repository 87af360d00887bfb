/**
 * An operation written ahead by one process and finished by the next (a
 * file store, the client restarted): the finishing span is a new trace's,
 * LINKED to the context stored at the write-ahead, never its child (that
 * trace may have ended hours ago).
 */
import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { instrument } from '../../src/opentelemetry.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';
import { tracing } from './tracing.js';

const t = tracing();
afterEach(removeTempDirs);

const OFFLINE = { online: () => false, onOnline: () => () => undefined };

describe('a resumed operation', () => {
  it('after a restart, its span is linked to the stored trace context, not parented to it', async () => {
    const rt = createFakeRuntime({ seed: 3 });
    const server = await startReferenceServer({ runtime: rt });
    const dir = tempDir();
    try {
      // First process: the operation is written ahead offline, inside the app's span, then the process stops.
      const firstStore = fileStore({ dir });
      const first = createClient({
        baseUrl: server.url,
        runtime: rt,
        fetch: rt.fetch,
        store: firstStore,
        owner: 'worker-1',
        connectivity: OFFLINE,
      });
      const uninstrumentFirst = instrument(first, { tracer: t.tracer });
      const parent = t.tracer.startSpan('place order');
      await context.with(trace.setSpan(context.active(), parent), () =>
        first.enqueue({ method: 'POST', url: '/payments', key: 'rs1', json: { amount: 10 } }),
      );
      parent.end();
      uninstrumentFirst();
      await first.close();
      await firstStore.close();
      expect(server.ledger.requests).toHaveLength(0);

      // Second process, same owner id: resume() finishes it.
      const secondStore = fileStore({ dir });
      const second = createClient({
        baseUrl: server.url,
        runtime: rt,
        fetch: rt.fetch,
        store: secondStore,
        owner: 'worker-1',
      });
      instrument(second, { tracer: t.tracer });
      const stored = await second.get('rs1');
      expect(stored?.trace).toEqual({
        traceId: parent.spanContext().traceId,
        spanId: parent.spanContext().spanId,
        flags: 1,
      });
      const summary = await rt.run(second.resume());
      expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
      await second.close();
      await secondStore.close();

      const op = t.operation('rs1');
      expect(op.links).toHaveLength(1);
      expect(op.links[0]?.context).toMatchObject({
        traceId: parent.spanContext().traceId,
        spanId: parent.spanContext().spanId,
      });
      // A new trace: not the stored one, and no parent at all (resume() ran outside any span).
      expect(op.spanContext().traceId).not.toBe(parent.spanContext().traceId);
      expect(op.parentSpanContext).toBeUndefined();
      expect(op.attributes).toMatchObject({ 'oncely.resumed': true, 'oncely.state': 'succeeded' });
      expect(t.attempts(op)).toHaveLength(1);
      expect(server.ledger.effectCount('rs1')).toBe(1);
    } finally {
      await server.close();
    }
  });
});
