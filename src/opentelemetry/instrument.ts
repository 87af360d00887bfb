/**
 * `instrument(client)`: traces (and, opt-in, metrics) built on the client's
 * public events alone, so it keeps working when oncely's internals change.
 *
 *   creating         → the caller's trace context, stored with the record
 *   enqueued         → remembered: this client created it (its span is a child)
 *   attempt:started  → the operation's span opens here if not yet open
 *   attempt:sending  → a CLIENT span; `traceparent` injected (propagate)
 *   attempt:ended    → that span ends; a try that never left is an event
 *   retry:scheduled, held → events on the operation's span
 *   settled          → the operation's span ends with its final state
 *
 * An operation's span opens at its first event on this client: one created
 * here is parented to the context stored at its write-ahead; one this
 * client did not create (resumed after a restart or reload, taken over from
 * another owner) starts a new span LINKED to that context, never parented
 * to it: its trace may have ended hours ago.
 */
import { type Context, context, propagation, ROOT_CONTEXT, type Span, type Tracer, trace } from '@opentelemetry/api';
import { InvalidOptionsError } from '../errors.js';
import type { OncelyEvents } from '../events.js';
import type { StoredTrace } from '../model.js';
import { OncelyMetrics, TRACKED_MAX } from './metrics.js';
import { checkInstrumentOptions, type InstrumentOptions } from './options.js';
import {
  ATTR,
  contextWith,
  endAttemptSpan,
  endOperationSpan,
  spanContextOf,
  startAttemptSpan,
  startOperationSpan,
} from './spans.js';
import { type Target, targetOf } from './url.js';

/** What `instrument` needs of a client: its events and its endpoint rules (any oncely client has them). */
export interface InstrumentableClient {
  on<E extends keyof OncelyEvents>(event: E, fn: (payload: OncelyEvents[E]) => void): () => void;
  policyFor(method: string, url: string): { name: string };
}

interface Open {
  span: Span;
  /** The context the operation's attempts start in. */
  context: Context;
  target: Target | undefined;
  /** The CLIENT span of the attempt on the network, if one is. */
  attempt: Span | undefined;
  /**
   * Requests this client handed to the network that never reached the server
   * (a refused connection): resends as the conventions count them, not as
   * oncely's `resendCount` does (attempts that may have reached the server).
   */
  refused: number;
  held: boolean;
}

/**
 * Traces every operation of `client` with OpenTelemetry; returns a function
 * that removes the instrumentation (ending spans still open).
 *
 * @example
 * import { instrument } from 'oncely/opentelemetry';
 * const uninstrument = instrument(client, { propagate: true });
 */
export function instrument(client: InstrumentableClient, options: InstrumentOptions = {}): () => void {
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof client.on !== 'function' ||
    typeof client.policyFor !== 'function'
  ) {
    throw new InvalidOptionsError('client', 'must be an oncely client (with on and policyFor)');
  }
  const checked = checkInstrumentOptions(options);
  const tracer: Tracer = checked.tracer ?? trace.getTracer('oncely');
  const propagate = checked.propagate === true;
  const metrics = checked.meter === undefined ? undefined : new OncelyMetrics(checked.meter);
  /** Operations whose span is open, oldest first. */
  const open = new Map<string, Open>();
  /** Keys this client wrote ahead, with the time: their span is a child of the stored context. */
  const created = new Map<string, number>();

  const policyOf = (target: Target | undefined, operation: string): string => {
    try {
      return target === undefined
        ? 'default'
        : client.policyFor(target.method, operation.slice(target.method.length + 1)).name;
    } catch {
      return 'default';
    }
  };

  /** The operation's open span, opened now if this is its first event here. */
  const ensure = (event: { key: string; operation: string; trace?: StoredTrace | undefined }): Open => {
    const known = open.get(event.key);
    if (known !== undefined) return known;
    const target = targetOf(event.operation);
    const startTime = created.get(event.key);
    created.delete(event.key);
    const here = startTime !== undefined;
    // Created here: a child of the caller's span as stored (no span then: a root, whatever context the loop runs in).
    // Not created here: a child of whatever is active where it is driven (`resume()` in a span), linked to the stored one.
    const parent = !here
      ? context.active()
      : event.trace === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(context.active(), spanContextOf(event.trace, false));
    const span = startOperationSpan(tracer, {
      key: event.key,
      policy: policyOf(target, event.operation),
      target,
      parent,
      linkTo: here ? undefined : event.trace,
      ...(startTime === undefined ? {} : { startTime }),
    });
    const entry: Open = {
      span,
      context: contextWith(parent, span),
      target,
      attempt: undefined,
      refused: 0,
      held: false,
    };
    if (open.size >= TRACKED_MAX) forgetOldest();
    open.set(event.key, entry);
    metrics?.seen(event.key);
    return entry;
  };

  /** Bounded: an operation this client never sees settle (another tab drives it) must not hold its span for ever. */
  const forgetOldest = (): void => {
    const [key, oldest] = open.entries().next().value as [string, Open];
    open.delete(key);
    oldest.attempt?.end();
    oldest.span.end();
  };

  const unsubscribers = [
    client.on('creating', (payload) => {
      const active = trace.getSpanContext(context.active());
      if (active === undefined || !trace.isSpanContextValid(active)) return;
      payload.trace = { traceId: active.traceId, spanId: active.spanId, flags: active.traceFlags };
    }),
    client.on('enqueued', (event) => {
      if (created.size >= TRACKED_MAX) created.delete(created.keys().next().value as string);
      created.set(event.key, Date.now());
      metrics?.seen(event.key);
    }),
    client.on('attempt:started', (event) => {
      const op = ensure(event);
      if (op.held) {
        op.held = false;
        op.span.addEvent('oncely.gate.released', { [ATTR.attempt]: event.attempt });
      }
      metrics?.released(event.key);
    }),
    client.on('attempt:sending', (event) => {
      const op = ensure(event);
      op.attempt?.end();
      op.attempt = startAttemptSpan(tracer, op.context, op.target, event.attempt, event.resendCount + op.refused);
      if (propagate) propagation.inject(contextWith(op.context, op.attempt), event.headers);
    }),
    client.on('attempt:ended', (event) => {
      metrics?.attemptEnded(event.class);
      const op = ensure(event);
      if (op.attempt !== undefined) {
        if (event.class === 'not_sent') op.refused++;
        endAttemptSpan(op.attempt, event);
        op.attempt = undefined;
        return;
      }
      // Never handed to the network (offline, the lease ran out, credentials failed): an event, not a span.
      op.span.addEvent('oncely.attempt.not_sent', {
        [ATTR.attempt]: event.attempt,
        [ATTR.attemptClass]: event.class,
        [ATTR.detail]: event.detail,
      });
    }),
    client.on('retry:scheduled', (event) => {
      const attributes: Record<string, string | number> = {
        [ATTR.attempt]: event.attempt,
        [ATTR.delayMs]: event.delayMs,
        [ATTR.attemptClass]: event.reason,
      };
      if (event.hintMs !== undefined) attributes[ATTR.hintMs] = event.hintMs;
      ensure(event).span.addEvent('oncely.retry.scheduled', attributes);
    }),
    client.on('held', (event) => {
      const op = ensure(event);
      op.held = true;
      op.span.addEvent('oncely.gate.held', { [ATTR.untilMs]: event.untilMs });
      metrics?.held(event.key, op.target?.serverAddress ?? 'unknown');
    }),
    client.on('settled', (event) => {
      const op = ensure(event);
      open.delete(event.key);
      op.attempt?.end();
      endOperationSpan(op.span, event);
      metrics?.settled(event.key, event.state);
    }),
  ];

  return () => {
    for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
    for (const op of open.values()) {
      op.attempt?.end();
      op.span.end();
    }
    open.clear();
    created.clear();
    metrics?.close();
  };
}
