/**
 * With `@opentelemetry/api` alone (no SDK registered, as in an app that
 * has not set up OpenTelemetry), instrumenting costs nothing visible: no
 * span is recorded, nothing is stored with the record, no header is sent,
 * and the operation runs as it would uninstrumented. Nothing is registered
 * here: this file runs in its own process.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { instrument } from '../../src/opentelemetry.js';
import { closeAll, harness } from '../helpers/harness.js';
import { headerSpy } from './tracing.js';

afterEach(closeAll);

describe('the API alone, no SDK', () => {
  it('records no span, stores no context, sends no trace header', async () => {
    let next: typeof globalThis.fetch | undefined;
    const spy = headerSpy(() => next as typeof globalThis.fetch);
    const h = await harness({ fetch: spy.fetch });
    next = h.rt.fetch;
    const tracer = trace.getTracer('oncely');
    const started: unknown[] = [];
    // Every span instrument() starts goes through the global tracer: none may record.
    const startSpan = tracer.startSpan.bind(tracer);
    const counting = {
      ...tracer,
      startSpan: (...args: Parameters<typeof tracer.startSpan>) => {
        const span = startSpan(...args);
        started.push(span.isRecording());
        return span;
      },
    } as typeof tracer;
    const uninstrument = instrument(h.client, { tracer: counting, propagate: true });
    // A caller "inside a span": without a context manager, the API has no active span to give.
    const outer = tracer.startSpan('outer');
    const result = await context.with(trace.setSpan(context.active(), outer), () =>
      h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'a1', json: {} })),
    );
    expect(result.status).toBe(201);
    // Spans were asked for (operation, attempt), and none records.
    expect(started).toEqual([false, false]);
    expect(outer.isRecording()).toBe(false);
    expect((await h.client.get('a1'))?.trace).toBeUndefined();
    expect(spy.sent).toHaveLength(1);
    expect([...(spy.sent[0]?.keys() ?? [])].filter((name) => /trace|baggage/i.test(name))).toEqual([]);
    // The import registered nothing globally.
    expect(propagation.fields()).toEqual([]);
    uninstrument();
  });
});
