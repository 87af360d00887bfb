/**
 * Retry budget and outage gate for one host: a token bucket that caps how
 * much retry traffic failures may add, and a circuit breaker that keeps an
 * exhausted budget from starving completion.
 *
 * Why both: a token bucket alone holds the load down during an outage, but
 * nothing refills it, so every operation dies at its deadline although the
 * server came back. The breaker turns "no tokens" into "host failing".
 * Its modes use the circuit-breaker words:
 *
 * - `closed`: retries pass while the budget has tokens;
 * - `open`: the budget ran dry; retries are held, and one probe goes through
 *   per interval (never before the server's `Retry-After`);
 * - `half-open`: a success proved recovery; the held operations are released
 *   by a ramp (policy/ramp.ts): a few at once, then twice as many every
 *   `rampMs / 20` while half of those released have succeeded, and never
 *   slower than spread over `rampMs`. Operations waiting out their own backoff after a failure
 *   are woken too (`onChange`'s `recovered`), or the last of them would come back up to
 *   `maxDelayMs` after the host did. A failure opens the gate again; once
 *   nothing is held and every release has succeeded (or the ramp's time is
 *   over), it closes with a full budget.
 *
 * Beside the budget, the gate knows whether the host refuses connections
 * (`reportRefused`): an unsent attempt costs no token, but 200 operations
 * each backing off alone notice the host's return only at their own next
 * try (up to `maxDelayMs` later), and each tries in the meantime. While the
 * host refuses, every attempt to it (a first one too) waits for one probe
 * at a time, 500–600 ms apart by default (policy/refused-probe.ts), and any
 * answer from the host releases them all at once.
 *
 * Deterministic: every method takes `nowMs` (and `random` where it jitters);
 * nothing here sleeps. The loop asks, then waits as told (flow/drive/gating.ts).
 */
import { Ramp } from './ramp.js';
import { REFUSED_PROBE_STEADY_MS, refusedProbeDelayMs } from './refused-probe.js';

export interface GateSettings {
  /** Tokens at start and at most. */
  capacity: number;
  /** Tokens each first attempt adds. */
  ratio: number;
  /** One probe per this interval while the gate is open. */
  probeIntervalMs: number;
  /** After recovery (half-open), held operations are released no slower than spread over this time. */
  rampMs: number;
}

/** `go`: send at `atMs`. `hold`: ask again at `untilMs`, or when the gate changes. */
export type Admission = { kind: 'go'; atMs: number; probe: boolean } | { kind: 'hold'; untilMs: number };

/** `closed`: passing. `open`: holding, one probe per interval. `half-open`: releasing the held by the ramp. */
export type GateMode = 'closed' | 'open' | 'half-open';

/** @internal */
export class HostGate {
  readonly settings: GateSettings;
  #tokens: number;
  #mode: GateMode = 'closed';
  #hintUntil = 0;
  #nextProbeAt = 0;
  #probeOut = false;
  /** The operation the probe out was admitted to: only its report or release counts as the probe's. */
  #probeHolder: string | undefined;
  /** The release after a proven recovery; only while half-open. */
  #ramp: Ramp | undefined;
  /** The host refuses connections (see `reportRefused`): since when, and how many probes it refused past the steady minute. */
  #refusing = false;
  #refusedSinceMs = 0;
  #refusedStreak = 0;
  readonly #held = new Set<string>();
  /** Admissions handed out whose attempt has not started, by operation: what each took (see `giveBack`). */
  readonly #unspent = new Map<string, 'token' | 'probe' | 'slot'>();
  readonly #listeners = new Set<(recovered: boolean) => void>();

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

  /** The host refuses connections: every attempt to it waits for the probe. */
  get refusing(): boolean {
    return this.#refusing;
  }

  get heldCount(): number {
    return this.#held.size;
  }

  /** A first attempt went out: retries earn a share of it. */
  noteFirstAttempt(): void {
    this.#tokens = Math.min(this.settings.capacity, this.#tokens + this.settings.ratio);
  }

  /**
   * May operation `id` send a retry now? `budgeted: false` (a first attempt,
   * or one after an unsent one) asks only whether the host is reachable: it
   * waits for the probe while the host refuses, and costs no token.
   */
  admitRetry(id: string, nowMs: number, random: () => number, budgeted = true): Admission {
    if (this.#refusing) return this.#probeOrHold(id, nowMs);
    if (!budgeted) {
      this.#held.delete(id);
      return { kind: 'go', atMs: nowMs, probe: false };
    }
    if (this.#mode === 'half-open' && this.#ramp?.over(nowMs) === true && this.#held.size === 0) this.#close();
    if (this.#mode === 'closed') {
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        this.#held.delete(id);
        this.#unspent.set(id, 'token');
        return { kind: 'go', atMs: nowMs, probe: false };
      }
      this.#open(nowMs, random);
    }
    if (this.#mode === 'half-open' && this.#ramp !== undefined) {
      const untilMs = this.#ramp.ask(id, nowMs);
      if (untilMs !== undefined) {
        this.#held.add(id);
        return { kind: 'hold', untilMs };
      }
      this.#held.delete(id);
      this.#unspent.set(id, 'slot');
      return { kind: 'go', atMs: nowMs, probe: false };
    }
    return this.#probeOrHold(id, nowMs);
  }

  /** The probe for `id` if none is out and one is due; else hold until it is. */
  #probeOrHold(id: string, nowMs: number): Admission {
    if (!this.#probeOut && nowMs >= this.#nextProbeAt) {
      this.#probeOut = true;
      this.#probeHolder = id;
      this.#held.delete(id);
      this.#unspent.set(id, 'probe');
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
   * Operation `id`'s admitted attempt is starting: its admission is used.
   * A probe stays out until its answer is reported (or `releaseProbe`).
   */
  spend(id: string): void {
    this.#unspent.delete(id);
  }

  /**
   * Operation `id` will not use its admission (it stopped or let go before
   * its attempt started): what the admission took is given back, so a lost
   * probe cannot hold the host shut and a lost token cannot shrink the
   * budget. A ramp's release is not given back: the ramp waits for half of
   * its releases to succeed before it widens, and one never sent only slows
   * that (its spread over `rampMs` goes on regardless). Nothing to give
   * back: no-op.
   */
  giveBack(id: string): void {
    const took = this.#unspent.get(id);
    if (took === undefined) return;
    this.#unspent.delete(id);
    if (took === 'token') this.#tokens = Math.min(this.settings.capacity, this.#tokens + 1);
    else if (took === 'probe') this.releaseProbe(id);
  }

  /**
   * The host answered well. While open, any success (a probe, or a first
   * attempt of a new operation) is proof of recovery: go half-open and start
   * the ramp, waking the held and those waiting out their own backoff.
   * While half-open, each success may widen the ramp; the last one closes
   * the gate.
   */
  reportSuccess(probe: boolean, nowMs: number, id?: string): void {
    if (this.#isCurrentProbe(probe, id)) this.#probeOut = false;
    this.#reachable();
    if (this.#mode === 'open') {
      this.#mode = 'half-open';
      this.#ramp = new Ramp(nowMs, this.settings.rampMs, this.#held.size);
      this.#notify(true);
      return;
    }
    if (this.#mode !== 'half-open' || this.#ramp === undefined) return;
    const widened = this.#ramp.success(nowMs);
    if (this.#held.size === 0 && this.#ramp.settled()) this.#close();
    else if (widened) this.#notify();
  }

  /**
   * The host failed (a retryable status, or a timeout). `hintMs` is the
   * server's Retry-After, if any: no probe goes out before it.
   */
  reportFailure(probe: boolean, nowMs: number, hintMs: number | undefined, random: () => number, id?: string): void {
    // Asked before `#open`, which forgets the probe out.
    const current = this.#isCurrentProbe(probe, id);
    // An answer, even a failing one, proves the host takes connections again.
    this.#reachable();
    if (hintMs !== undefined) this.#hintUntil = Math.max(this.#hintUntil, nowMs + hintMs);
    if (this.#mode === 'half-open') this.#open(nowMs, random);
    if (current) {
      this.#probeOut = false;
      this.#nextProbeAt = this.#probeTime(nowMs + this.settings.probeIntervalMs, random);
      this.#notify();
    }
  }

  /**
   * The host refused a connection (or its name did not resolve): nothing was
   * sent, so no token is spent, but no attempt to it can succeed until it
   * comes back. From the first refusal every attempt waits for one probe at
   * a time, at a steady 500–600 ms (by default) for the first minute, then
   * each refused probe a little further off (`refusedProbeDelayMs`), and any
   * answer releases everyone (`#reachable`).
   */
  reportRefused(probe: boolean, nowMs: number, random: () => number, id?: string): void {
    if (!this.#refusing) {
      this.#refusing = true;
      this.#refusedSinceMs = nowMs;
      this.#refusedStreak = 0;
      this.#forgetProbe();
      this.#nextProbeAt = nowMs + refusedProbeDelayMs(this.settings.probeIntervalMs, 0, random);
      return;
    }
    if (!this.#isCurrentProbe(probe, id)) return;
    this.#probeOut = false;
    if (nowMs - this.#refusedSinceMs >= REFUSED_PROBE_STEADY_MS) this.#refusedStreak += 1;
    this.#nextProbeAt = nowMs + refusedProbeDelayMs(this.settings.probeIntervalMs, this.#refusedStreak, random);
    this.#notify();
  }

  /** The host answered: no longer refusing; every operation held for the probe asks again at once. */
  #reachable(): void {
    if (!this.#refusing) return;
    this.#refusing = false;
    this.#refusedStreak = 0;
    this.#nextProbeAt = 0;
    this.#notify();
  }

  /**
   * The probe came back with nothing to tell (it was never sent, its lease
   * was lost, it was aborted or failed locally): another may go at once.
   * Every probe admitted ends in exactly one report or release, or the gate
   * would hold every operation until its deadline.
   */
  releaseProbe(id?: string): void {
    if (!this.#isCurrentProbe(this.#probeOut, id)) return;
    this.#probeOut = false;
    this.#notify();
  }

  /**
   * A report or release of a probe (by operation `id`, when given) is about
   * the probe out now: not one admitted before the gate last re-opened,
   * whose late answer must not let a second probe out beside the current one.
   */
  #isCurrentProbe(probe: boolean, id: string | undefined): boolean {
    return probe && this.#probeOut && (id === undefined || id === this.#probeHolder);
  }

  /**
   * Calls `fn` whenever held operations should ask again. `recovered`: a
   * success proved the host back after the gate opened, so an operation
   * waiting out its own backoff after a failure asks the gate again too,
   * instead of at its own time. Returns an unsubscribe.
   */
  onChange(fn: (recovered: boolean) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Trips the breaker: hold retries, probe from now on (never before the hint). */
  #open(nowMs: number, random: () => number): void {
    this.#mode = 'open';
    this.#ramp = undefined;
    this.#forgetProbe();
    this.#nextProbeAt = this.#probeTime(nowMs, random);
  }

  /** The probe out is forgotten: its late report, or giving it back, must not release the next one. */
  #forgetProbe(): void {
    this.#probeOut = false;
    this.#probeHolder = undefined;
    for (const [id, took] of this.#unspent) if (took === 'probe') this.#unspent.delete(id);
  }

  /** The ramp is over: back to passing, with a full budget. */
  #close(): void {
    this.#mode = 'closed';
    this.#ramp = undefined;
    this.#tokens = this.settings.capacity;
  }

  /** Not before `earliestMs` nor the server's hint, plus a little jitter so clients do not probe in step. */
  #probeTime(earliestMs: number, random: () => number): number {
    const base = Math.max(earliestMs, this.#hintUntil);
    return Math.round(base + random() * this.settings.probeIntervalMs * 0.1);
  }

  #notify(recovered = false): void {
    for (const fn of [...this.#listeners]) fn(recovered);
  }
}
