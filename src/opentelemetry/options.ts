/**
 * `instrument`'s options, checked at once: a bad value throws
 * `InvalidOptionsError` naming the field, before any listener is added.
 */
import type { Meter, Tracer } from '@opentelemetry/api';
import { InvalidOptionsError } from '../errors.js';

export interface InstrumentOptions {
  /**
   * Where spans go. Without an SDK registered, the API's tracer records
   * nothing, and nothing is stored with the records either.
   * @default trace.getTracer('oncely')
   * @example { tracer: provider.getTracer('checkout') }
   */
  tracer?: Tracer;
  /**
   * Metrics are opt-in: give a meter to count operations by final state and
   * attempts by class, and to follow the queue and the outage gates.
   * @default none (no metrics)
   * @example { meter: metrics.getMeter('oncely') }
   */
  meter?: Meter;
  /**
   * Inject the trace context (`traceparent`, `tracestate`, with the globally
   * registered propagator) into each attempt's request, as the attempt's
   * CLIENT span. Per request only: never stored, never in the fingerprint,
   * never replacing a header already set (the `headers` callback, which
   * signs, runs before and does not see it). Opt-in: a third-party API may
   * not want your trace ids.
   * @default false
   * @example { propagate: true }
   */
  propagate?: boolean;
}

const KEYS = new Set(['tracer', 'meter', 'propagate']);

export function checkInstrumentOptions(options: unknown): InstrumentOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw new InvalidOptionsError(key, 'is not an option of instrument (tracer, meter, propagate)');
  }
  const { tracer, meter, propagate } = options as Record<string, unknown>;
  if (tracer !== undefined && typeof (tracer as Partial<Tracer>).startSpan !== 'function') {
    throw new InvalidOptionsError('tracer', 'must be an OpenTelemetry Tracer (with startSpan)');
  }
  if (
    meter !== undefined &&
    (typeof (meter as Partial<Meter>).createCounter !== 'function' ||
      typeof (meter as Partial<Meter>).createUpDownCounter !== 'function')
  ) {
    throw new InvalidOptionsError('meter', 'must be an OpenTelemetry Meter (with createCounter)');
  }
  if (propagate !== undefined && typeof propagate !== 'boolean') {
    throw new InvalidOptionsError('propagate', 'must be true or false');
  }
  return options as InstrumentOptions;
}
