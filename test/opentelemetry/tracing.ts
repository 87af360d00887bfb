/**
 * An OpenTelemetry SDK for the tests: spans kept in memory
 * (sdk-trace-base's InMemorySpanExporter), the async-hooks context manager
 * and the W3C propagator registered globally, as an application would.
 * Test files run in their own process (integration tier): the global
 * registration stays in the file that asked for it.
 */
import { context, propagation, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    exporter,
    provider,
    tracer: provider.getTracer('oncely-test'),
    /** The finished span of the operation under `key` (exactly one). */
    operation(key: string): ReadableSpan {
      const found = exporter
        .getFinishedSpans()
        .filter((s) => s.kind === SpanKind.INTERNAL && s.attributes['oncely.key'] === key);
      if (found.length !== 1) throw new Error(`expected one operation span for ${key}, found ${found.length}`);
      return found[0] as ReadableSpan;
    },
    /** The CLIENT spans under `parent`, in start order. */
    attempts(parent: ReadableSpan): ReadableSpan[] {
      return exporter
        .getFinishedSpans()
        .filter((s) => s.kind === SpanKind.CLIENT && s.parentSpanContext?.spanId === parent.spanContext().spanId)
        .sort((a, b) => (a.attributes['oncely.attempt'] as number) - (b.attributes['oncely.attempt'] as number));
    },
  };
}

/** A `fetch` that notes the headers each request leaves with, then sends it with `next`. */
export function headerSpy(next: () => typeof globalThis.fetch) {
  const sent: Headers[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    const headers = new Headers(input instanceof Request ? input.headers : undefined);
    for (const [name, value] of new Headers(init?.headers)) headers.set(name, value);
    sent.push(headers);
    return next()(input, init);
  };
  return { sent, fetch };
}
