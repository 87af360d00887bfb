/**
 * The opt-in metrics (`meter`): counters a dashboard sums over instances,
 * with low-cardinality attributes only (no keys, no URLs).
 *
 * - `oncely.operations`: operations settled, by `oncely.state`.
 * - `oncely.attempts`: attempts ended, by `oncely.attempt.class`.
 * - `oncely.operations.pending`: the queue depth as this client sees it:
 *   operations it wrote ahead or drives that have not settled here.
 * - `oncely.operations.held`: operations an outage gate holds now (the
 *   host's retry budget ran dry), by `server.address`: the gate's state.
 */
import type { Counter, Meter, UpDownCounter } from '@opentelemetry/api';

/** Most operations tracked at once (open spans, pending and held counts); past it the oldest are let go. */
export const TRACKED_MAX = 10_000;

export class OncelyMetrics {
  readonly #operations: Counter;
  readonly #attempts: Counter;
  readonly #pending: UpDownCounter;
  readonly #held: UpDownCounter;
  /** Keys counted in `pending`, so that each is taken off once. */
  readonly #counted = new Set<string>();
  /** Keys counted in `held`, with the host they were counted under. */
  readonly #heldKeys = new Map<string, string>();

  constructor(meter: Meter) {
    this.#operations = meter.createCounter('oncely.operations', {
      description: 'Operations settled, by final state',
      unit: '{operation}',
    });
    this.#attempts = meter.createCounter('oncely.attempts', {
      description: 'Attempts ended, by class',
      unit: '{attempt}',
    });
    this.#pending = meter.createUpDownCounter('oncely.operations.pending', {
      description: 'Operations written ahead or driven by this client and not settled yet',
      unit: '{operation}',
    });
    this.#held = meter.createUpDownCounter('oncely.operations.held', {
      description: "Operations held by an open outage gate (the host's retry budget ran dry)",
      unit: '{operation}',
    });
  }

  /** An operation this client wrote ahead, or started to drive. */
  seen(key: string): void {
    // Bounded: a tab that writes ahead what another tab drives never sees those settle.
    if (this.#counted.has(key) || this.#counted.size >= TRACKED_MAX) return;
    this.#counted.add(key);
    this.#pending.add(1);
  }

  held(key: string, host: string): void {
    if (this.#heldKeys.has(key)) return;
    this.#heldKeys.set(key, host);
    this.#held.add(1, { 'server.address': host });
  }

  /** The operation goes on (an attempt starts) or settles: no longer held. */
  released(key: string): void {
    const host = this.#heldKeys.get(key);
    if (host === undefined) return;
    this.#heldKeys.delete(key);
    this.#held.add(-1, { 'server.address': host });
  }

  attemptEnded(attemptClass: string): void {
    this.#attempts.add(1, { 'oncely.attempt.class': attemptClass });
  }

  settled(key: string, state: string): void {
    this.released(key);
    this.#operations.add(1, { 'oncely.state': state });
    if (this.#counted.delete(key)) this.#pending.add(-1);
  }

  /** `uninstrument()`: what this client counted as pending or held is taken off. */
  close(): void {
    for (const key of [...this.#heldKeys.keys()]) this.released(key);
    if (this.#counted.size > 0) this.#pending.add(-this.#counted.size);
    this.#counted.clear();
  }
}
