/**
 * Retry budget and outage gate for one host: a token bucket that caps how
 * much retry traffic failures may add, and a gate that keeps an exhausted
 * budget from starving completion.
 *
 * Why both: a token bucket alone holds the load down during an outage, but
 * nothing refills it, so every operation dies at its deadline although the
 * server came back. The gate turns "no tokens" into "host failing": retries
 * are held, one probe goes through per interval (never before the server's
 * `Retry-After`), and a success reopens the host, releasing the held
 * operations spread over a ramp instead of all at once.
 *
 * Deterministic: every method takes `nowMs` (and `random` where it jitters);
 * nothing here sleeps. The loop asks, then waits as told.
 */

export interface GateSettings {
  /** Tokens at start and at most. */
  capacity: number;
  /** Tokens each first attempt adds. */
  ratio: number;
  /** One probe per this interval while failing. */
  probeIntervalMs: number;
  /** Held operations are released spread over this time after recovery. */
  rampMs: number;
}

/** `go`: send at `atMs` (now or a ramp slot). `hold`: ask again at `untilMs`, or when the gate changes. */
export type Admission = { kind: 'go'; atMs: number; probe: boolean } | { kind: 'hold'; untilMs: number };

export type GateMode = 'open' | 'closed' | 'ramping';

export class HostGate {
  readonly settings: GateSettings;
  #tokens: number;
  #mode: GateMode = 'open';
  #hintUntil = 0;
  #nextProbeAt = 0;
  #probeOut = false;
  #rampStartAt = 0;
  #rampSlotMs = 0;
  #rampNext = 0;
  readonly #held = new Set<string>();
  readonly #listeners = new Set<() => void>();

  constructor(settings: GateSettings) {
    this.settings = settings;
    this.#tokens = settings.capacity;
  }

  get mode(): GateMode {
    return this.#mode;
  }

  get tokens(): number {
    return this.#tokens;
  }

  get heldCount(): number {
    return this.#held.size;
  }

  /** A first attempt went out: retries earn a share of it. */
  noteFirstAttempt(): void {
    this.#tokens = Math.min(this.settings.capacity, this.#tokens + this.settings.ratio);
  }

  /** May operation `id` send a retry now? */
  admitRetry(id: string, nowMs: number, random: () => number): Admission {
    if (this.#mode === 'ramping' && nowMs >= this.#rampStartAt + this.settings.rampMs && this.#held.size === 0) {
      this.#open();
    }
    if (this.#mode === 'open') {
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        this.#held.delete(id);
        return { kind: 'go', atMs: nowMs, probe: false };
      }
      this.#close(nowMs, random);
    }
    if (this.#mode === 'ramping') {
      const slot = this.#rampStartAt + this.#rampNext * this.#rampSlotMs;
      this.#rampNext += 1;
      this.#held.delete(id);
      return { kind: 'go', atMs: Math.max(nowMs, Math.round(slot)), probe: false };
    }
    if (!this.#probeOut && nowMs >= this.#nextProbeAt) {
      this.#probeOut = true;
      this.#held.delete(id);
      return { kind: 'go', atMs: nowMs, probe: true };
    }
    this.#held.add(id);
    return {
      kind: 'hold',
      untilMs: this.#probeOut ? nowMs + this.settings.probeIntervalMs : this.#nextProbeAt,
    };
  }

  /** Operation `id` no longer waits (it stopped, e.g. at its deadline). */
  forget(id: string): void {
    this.#held.delete(id);
  }

  /**
   * The host answered well. While failing, any success (a probe, or a first
   * attempt of a new operation) is proof of recovery: start the ramp.
   */
  reportSuccess(probe: boolean, nowMs: number): void {
    if (probe) this.#probeOut = false;
    if (this.#mode === 'closed') {
      this.#mode = 'ramping';
      this.#rampStartAt = nowMs;
      this.#rampSlotMs = this.settings.rampMs / Math.max(1, this.#held.size);
      this.#rampNext = 0;
      this.#notify();
    }
  }

  /**
   * The host failed (a retryable status, or a timeout). `hintMs` is the
   * server's Retry-After, if any: no probe goes out before it.
   */
  reportFailure(probe: boolean, nowMs: number, hintMs: number | undefined, random: () => number): void {
    if (hintMs !== undefined) this.#hintUntil = Math.max(this.#hintUntil, nowMs + hintMs);
    if (this.#mode === 'ramping') this.#close(nowMs, random);
    if (probe) {
      this.#probeOut = false;
      this.#nextProbeAt = this.#probeTime(nowMs + this.settings.probeIntervalMs, random);
      this.#notify();
    }
  }

  /**
   * The probe came back with nothing to tell (it was never sent, its lease
   * was lost, it was aborted or failed locally): another may go at once.
   * Every probe admitted ends in exactly one report or release, or the gate
   * would hold every operation until its deadline.
   */
  releaseProbe(): void {
    if (!this.#probeOut) return;
    this.#probeOut = false;
    this.#notify();
  }

  /** Calls `fn` whenever held operations should ask again. Returns an unsubscribe. */
  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #close(nowMs: number, random: () => number): void {
    this.#mode = 'closed';
    this.#probeOut = false;
    this.#nextProbeAt = this.#probeTime(nowMs, random);
  }

  #open(): void {
    this.#mode = 'open';
    this.#tokens = this.settings.capacity;
  }

  /** Not before `earliestMs` nor the server's hint, plus a little jitter so clients do not probe in step. */
  #probeTime(earliestMs: number, random: () => number): number {
    const base = Math.max(earliestMs, this.#hintUntil);
    return Math.round(base + random() * this.settings.probeIntervalMs * 0.1);
  }

  #notify(): void {
    for (const fn of [...this.#listeners]) fn();
  }
}

/** One gate per host (or per endpoint on a host), created on first use. */
export class Governor {
  readonly #gates = new Map<string, HostGate>();

  gate(scope: string, settings: GateSettings): HostGate {
    let gate = this.#gates.get(scope);
    if (gate === undefined) {
      gate = new HostGate(settings);
      this.#gates.set(scope, gate);
    }
    return gate;
  }
}
