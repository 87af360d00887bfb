/**
 * The spans of `instrument(client)` against the reference server on
 * 127.0.0.1, recorded by the SDK's in-memory exporter: one INTERNAL span per
 * operation, one CLIENT span per attempt that may reach the server, waits
 * and unsent tries as events, and the trace context stored at the write-ahead.
 */
import { createServer } from 'node:net';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientOptions } from '../../src/index.js';
import { instrument } from '../../src/opentelemetry.js';
import { closeAll, harness } from '../helpers/harness.js';
import { headerSpy, tracing } from './tracing.js';

afterEach(closeAll);

const t = tracing();
afterEach(() => t.exporter.reset());

const RULES: Partial<ClientOptions> = {
  endpoints: { 'POST /payments': { backoff: { jitter: 'none' } } },
};

/** A harness whose client is instrumented, and whose requests' headers are noted. */
async function traced(options: Partial<ClientOptions> = {}, propagate = false) {
  let next: typeof globalThis.fetch | undefined;
  const spy = headerSpy(() => next as typeof globalThis.fetch);
  const h = await harness({ ...RULES, ...options, fetch: spy.fetch });
  next = h.rt.fetch;
  const uninstrument = instrument(h.client, { tracer: t.tracer, propagate });
  return { h, sent: spy.sent, uninstrument };
}

/** A port on 127.0.0.1 that nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs `fn` inside an active span (the application's own, say an HTTP handler's). */
async function within<T>(fn: () => Promise<T>) {
  const parent = t.tracer.startSpan('checkout');
  try {
    return { parent, result: await context.with(trace.setSpan(context.active(), parent), fn) };
  } finally {
    parent.end();
  }
}

describe('instrument(client): spans', () => {
  it('a success: the operation span is a child of the caller’s, with one CLIENT span; the context is stored', async () => {
    const { h } = await traced();
    const { parent } = await within(() =>
      h.rt.run(h.client.send({ method: 'POST', url: '/payments?ref=s3cret&cart=9', key: 'ok1', json: { a: 1 } })),
    );
    const op = t.operation('ok1');
    expect(op.name).toBe('POST /payments');
    expect(op.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(op.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(op.links).toEqual([]);
    expect(op.attributes).toMatchObject({
      'oncely.key': 'ok1',
      'oncely.policy': 'POST /payments',
      'oncely.state': 'succeeded',
      'oncely.may_have_taken_effect': true,
      'oncely.attempts': 1,
      'oncely.not_sent': 0,
    });
    expect(op.attributes['oncely.stop_reason']).toBeUndefined();
    expect(op.status.code).toBe(SpanStatusCode.UNSET);

    const [attempt, ...more] = t.attempts(op);
    expect(more).toEqual([]);
    expect(attempt?.kind).toBe(SpanKind.CLIENT);
    expect(attempt?.name).toBe('POST');
    expect(attempt?.attributes).toEqual({
      'http.request.method': 'POST',
      'url.full': `${h.server.url}/payments?ref=REDACTED&cart=REDACTED`,
      'server.address': '127.0.0.1',
      'server.port': h.server.port,
      'http.response.status_code': 201,
      'oncely.attempt': 1,
      'oncely.attempt.class': 'completed',
    });
    // The caller's context, stored at the write-ahead.
    const record = await h.client.get('ok1');
    expect(record?.trace).toEqual({
      traceId: parent.spanContext().traceId,
      spanId: parent.spanContext().spanId,
      flags: 1,
    });
  });

  it('called outside any span: a root span, and no context stored', async () => {
    const { h } = await traced();
    const other = t.tracer.startSpan('unrelated');
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'root1', json: {} }));
    other.end();
    const op = t.operation('root1');
    expect(op.parentSpanContext).toBeUndefined();
    expect(op.links).toEqual([]);
    expect(t.attempts(op)).toHaveLength(1);
    expect((await h.client.get('root1'))?.trace).toBeUndefined();
  });

  it('a retry: two CLIENT spans, the resend counted, the backoff an event on the operation span', async () => {
    const { h } = await traced();
    h.server.script({ kind: 'status', status: 503 });
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'rt1', json: {} })));
    const op = t.operation('rt1');
    const attempts = t.attempts(op);
    expect(attempts.map((a) => a.attributes['http.response.status_code'])).toEqual([503, 201]);
    expect(attempts[0]?.attributes['error.type']).toBe('503');
    expect(attempts[0]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts[0]?.attributes['http.request.resend_count']).toBeUndefined();
    expect(attempts[1]?.attributes['http.request.resend_count']).toBe(1);
    expect(attempts[1]?.attributes['error.type']).toBeUndefined();
    const retry = op.events.filter((e) => e.name === 'oncely.retry.scheduled');
    expect(retry).toHaveLength(1);
    expect(retry[0]?.attributes).toMatchObject({ 'oncely.attempt': 2, 'oncely.attempt.class': 'retryable' });
    expect(retry[0]?.attributes?.['oncely.delay_ms']).toBeGreaterThan(0);
    expect(op.attributes).toMatchObject({ 'oncely.state': 'succeeded', 'oncely.attempts': 2 });
    expect(h.server.ledger.effectCount('rt1')).toBe(1);
  });

  it('unknown: the connection reset after the server applied it; the span says it may have taken effect', async () => {
    const { h } = await traced({ endpoints: { 'POST /payments': { maxAttempts: 1 } } });
    h.server.script({ kind: 'reset-after-commit' });
    const error = await within(() =>
      h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'un1', json: {} })).catch((e: unknown) => e),
    );
    expect(error.result).toMatchObject({ state: 'unknown' });
    const op = t.operation('un1');
    expect(op.attributes).toMatchObject({
      'oncely.state': 'unknown',
      'oncely.may_have_taken_effect': true,
      'oncely.stop_reason': 'attempts',
      'oncely.attempts': 1,
    });
    expect(op.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'unknown (attempts)' });
    const [attempt] = t.attempts(op);
    expect(attempt?.attributes['error.type']).toBe('ambiguous');
    expect(attempt?.attributes['http.response.status_code']).toBeUndefined();
    expect(attempt?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('a try that never left (a header fetch refuses) is an event, not a span; the next one is the first sent', async () => {
    let calls = 0;
    const { h } = await traced({ headers: () => (calls++ === 0 ? { 'bad header': 'x' } : {}) });
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'ns1', json: {} })));
    const op = t.operation('ns1');
    const unsent = op.events.filter((e) => e.name === 'oncely.attempt.not_sent');
    expect(unsent).toHaveLength(1);
    expect(unsent[0]?.attributes).toMatchObject({ 'oncely.attempt': 1, 'oncely.attempt.class': 'not_sent' });
    const attempts = t.attempts(op);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.attributes['http.request.resend_count']).toBeUndefined();
    expect(op.attributes).toMatchObject({ 'oncely.state': 'succeeded', 'oncely.attempts': 1, 'oncely.not_sent': 1 });
  });

  it('an attempt that timed out: error.type timeout, and the retry is a resend', async () => {
    const { h } = await traced({ endpoints: { 'POST /payments': { attemptTimeoutMs: 1_000 } } });
    h.server.script({ kind: 'delay', ms: 5_000 });
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'to1', json: {} })));
    const attempts = t.attempts(t.operation('to1'));
    // Timed out; then the server may still be working on it (409 in progress) until its answer is replayed.
    const types = attempts.map((a) => a.attributes['error.type']);
    expect(types[0]).toBe('timeout');
    expect(types.at(-1)).toBeUndefined();
    expect(types.slice(1, -1).every((type) => type === '409')).toBe(true);
    expect(attempts.map((a) => a.attributes['http.request.resend_count'])).toEqual(
      attempts.map((_, i) => (i === 0 ? undefined : i)),
    );
  });

  it('a refused connection (a real closed port): a CLIENT span with error.type not_sent, and the next is a resend', async () => {
    const port = await closedPort();
    let refuse = true;
    const h = await harness({
      ...RULES,
      fetch: (input, init) => {
        if (!refuse) return h.rt.fetch(input, init);
        refuse = false;
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.port = String(port);
        return h.rt.fetch(input instanceof Request ? new Request(url, input) : url, init);
      },
    });
    instrument(h.client, { tracer: t.tracer });
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'rf1', json: {} })));
    const op = t.operation('rf1');
    const attempts = t.attempts(op);
    expect(attempts.map((a) => a.attributes['error.type'])).toEqual(['not_sent', undefined]);
    expect(attempts.map((a) => a.attributes['oncely.attempt.class'])).toEqual(['not_sent', 'completed']);
    // The conventions count every request resent; oncely counts only those that may have reached the server.
    expect(attempts[1]?.attributes['http.request.resend_count']).toBe(1);
    expect(op.attributes).toMatchObject({ 'oncely.attempts': 1, 'oncely.not_sent': 1 });
  });

  it('a gate hold is an event on the operation span, released when the next attempt starts', async () => {
    const { h } = await traced({
      policy: { budget: { capacity: 1, ratio: 0.1, probeIntervalMs: 10_000 }, backoff: { jitter: 'none' } },
      endpoints: { 'POST /payments': { deadlineMs: 600_000 } },
    });
    h.server.setOutage({ status: 503 });
    const pending = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'gh1', json: {} });
    await h.rt.run(new Promise<void>((resolve) => h.client.on('held', () => resolve())));
    h.server.setOutage(undefined);
    expect(await h.rt.run(pending.settled)).toMatchObject({ ok: true });
    const names = t.operation('gh1').events.map((e) => e.name);
    expect(names).toContain('oncely.gate.held');
    expect(names.indexOf('oncely.gate.released')).toBeGreaterThan(names.indexOf('oncely.gate.held'));
  });
});

describe('instrument(client): propagation', () => {
  it('propagate: true sends the CLIENT span as traceparent, per attempt; never stored, not in the fingerprint', async () => {
    const { h, sent } = await traced({}, true);
    h.server.script({ kind: 'status', status: 503 });
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'pr1', json: { n: 1 } })));
    const attempts = t.attempts(t.operation('pr1'));
    expect(attempts).toHaveLength(2);
    expect(sent.map((headers) => headers.get('traceparent'))).toEqual(
      attempts.map((a) => `00-${a.spanContext().traceId}-${a.spanContext().spanId}-01`),
    );
    // The key header is the client's, untouched.
    expect(sent.map((headers) => headers.get('idempotency-key'))).toEqual(['pr1', 'pr1']);
    const record = await h.client.get('pr1');
    expect(Object.keys(record?.request.headers ?? {}).map((n) => n.toLowerCase())).not.toContain('traceparent');

    // The same request from a client that is not instrumented: the same fingerprint.
    const plain = h.another();
    await h.rt.run(plain.send({ method: 'POST', url: '/payments', key: 'pr2', json: { n: 1 } }));
    expect((await plain.get('pr2'))?.fingerprint).toBe(record?.fingerprint);
  });

  it('never replaces a header already set (here by the headers callback), whatever its case', async () => {
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const { h, sent } = await traced({ headers: () => ({ TraceParent: own }) }, true);
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'pr4', json: {} })));
    expect(t.attempts(t.operation('pr4'))).toHaveLength(1);
    expect(sent[0]?.get('traceparent')).toBe(own);
  });

  it('propagate: false (the default) sends no trace header', async () => {
    const { h, sent } = await traced();
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'pr3', json: {} })));
    expect(t.attempts(t.operation('pr3'))).toHaveLength(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.has('traceparent')).toBe(false);
  });

  it('uninstrument() stops it all: no span, no stored context, no header', async () => {
    const { h, sent, uninstrument } = await traced({}, true);
    uninstrument();
    await within(() => h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'off1', json: {} })));
    expect(t.exporter.getFinishedSpans().filter((s) => s.name !== 'checkout')).toEqual([]);
    expect(sent[0]?.has('traceparent')).toBe(false);
    expect((await h.client.get('off1'))?.trace).toBeUndefined();
  });
});
