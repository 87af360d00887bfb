/**
 * The spans and their attributes, as the stable HTTP semantic conventions
 * want them: one INTERNAL span per operation (its retries, waits and gate
 * holds as events, so backoff never reads as latency of one request) and
 * one CLIENT span per attempt handed to the network. Pure shaping: which
 * span is open for which key is instrument.ts's business.
 */
import {
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { OncelyEvents } from '../events.js';
import type { StoredTrace } from '../model.js';
import type { Target } from './url.js';

export const ATTR = {
  key: 'oncely.key',
  policy: 'oncely.policy',
  state: 'oncely.state',
  reason: 'oncely.stop_reason',
  mayHaveTakenEffect: 'oncely.may_have_taken_effect',
  attempts: 'oncely.attempts',
  notSent: 'oncely.not_sent',
  resumed: 'oncely.resumed',
  attempt: 'oncely.attempt',
  attemptClass: 'oncely.attempt.class',
  detail: 'oncely.detail',
  delayMs: 'oncely.delay_ms',
  hintMs: 'oncely.hint_ms',
  untilMs: 'oncely.until_ms',
} as const;

/** A stored trace context as the API's span context (`isRemote`: it may come from another process). */
export function spanContextOf(stored: StoredTrace, isRemote = true): SpanContext {
  return { traceId: stored.traceId, spanId: stored.spanId, traceFlags: stored.flags & 0xff, isRemote };
}

function targetAttributes(target: Target | undefined): Attributes {
  if (target === undefined) return {};
  return {
    'http.request.method': target.method,
    'url.full': target.urlFull,
    'server.address': target.serverAddress,
    'server.port': target.serverPort,
  };
}

export interface OperationStart {
  key: string;
  /** The endpoint rule's pattern, or `default`. */
  policy: string;
  target: Target | undefined;
  /** The span's parent: the caller's context (with the stored trace context as its span, when created here). */
  parent: Context;
  /** Resumed from a record this client did not create: linked to its stored trace context, not parented. */
  linkTo: StoredTrace | undefined;
  startTime?: number;
}

/** The operation's span: named by its endpoint rule (`POST /payments`), else by its method. */
export function startOperationSpan(tracer: Tracer, start: OperationStart): Span {
  const name = start.policy !== 'default' ? start.policy : (start.target?.method ?? 'oncely');
  const links: Link[] = start.linkTo === undefined ? [] : [{ context: spanContextOf(start.linkTo) }];
  const attributes: Attributes = {
    [ATTR.key]: start.key,
    [ATTR.policy]: start.policy,
    ...targetAttributes(start.target),
  };
  if (start.linkTo !== undefined) attributes[ATTR.resumed] = true;
  return tracer.startSpan(
    name,
    {
      kind: SpanKind.INTERNAL,
      attributes,
      links,
      ...(start.startTime === undefined ? {} : { startTime: start.startTime }),
    },
    start.parent,
  );
}

export function endOperationSpan(span: Span, settled: OncelyEvents['settled']): void {
  const attributes: Attributes = {
    [ATTR.state]: settled.state,
    [ATTR.mayHaveTakenEffect]: settled.mayHaveTakenEffect,
    [ATTR.attempts]: settled.attempts,
    [ATTR.notSent]: settled.notSent,
  };
  if (settled.reason !== undefined) attributes[ATTR.reason] = settled.reason;
  span.setAttributes(attributes);
  if (settled.state !== 'succeeded') {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: `${settled.state}${settled.reason === undefined ? '' : ` (${settled.reason})`}`,
    });
  }
  span.end();
}

/** One attempt handed to the network: a CLIENT span under the operation's, named by its method (semconv). */
export function startAttemptSpan(
  tracer: Tracer,
  parent: Context,
  target: Target | undefined,
  attempt: number,
  /** Requests of this operation sent before (`http.request.resend_count`, set on resends only). */
  resendCount: number,
): Span {
  const attributes: Attributes = { ...targetAttributes(target), [ATTR.attempt]: attempt };
  if (resendCount > 0) attributes['http.request.resend_count'] = resendCount;
  return tracer.startSpan(target?.method ?? 'HTTP', { kind: SpanKind.CLIENT, attributes }, parent);
}

/**
 * `error.type` as the conventions want it: the status code of a 4xx/5xx,
 * `timeout`, else the attempt's class (`ambiguous`: a connection lost with
 * the request maybe applied; `not_sent`: refused before it left).
 */
export function errorTypeOf(ended: OncelyEvents['attempt:ended']): string | undefined {
  if (ended.status !== undefined && ended.status >= 400) return String(ended.status);
  if (ended.class === 'completed') return undefined;
  if (ended.status === undefined && ended.detail.startsWith('no answer within')) return 'timeout';
  return ended.class;
}

export function endAttemptSpan(span: Span, ended: OncelyEvents['attempt:ended']): void {
  const attributes: Attributes = { [ATTR.attemptClass]: ended.class };
  if (ended.status !== undefined && ended.status > 0) attributes['http.response.status_code'] = ended.status;
  const errorType = errorTypeOf(ended);
  if (errorType !== undefined) {
    attributes['error.type'] = errorType;
    span.setStatus({ code: SpanStatusCode.ERROR, message: ended.detail });
  }
  span.setAttributes(attributes);
  span.end();
}

/** The context a child of `span` starts in. */
export function contextWith(parent: Context, span: Span): Context {
  return trace.setSpan(parent, span);
}
