/**
 * Attempt timeouts on one runtime sleep per runtime, not one per attempt.
 *
 * Why: a sleep that can be cancelled through the runtime needs an
 * `AbortController`, a listener and an abort for every attempt, ~15–30 µs of
 * CPU on Node 20 (an `AbortSignal` is a transferable object there): a few
 * per cent of a whole request (see BENCHMARKS.md). Here one sleep runs until
 * the earliest deadline among the attempts in flight, and attempts only join
 * and leave a set. When the set empties, the sleep is cancelled after one
 * `sleep(0)`, not at once: a caller sending one request after another starts
 * its next attempt before that, and keeps the sleep that is already running.
 * Nothing stays scheduled once no attempt is in flight.
 */
import type { ResolvedPolicy } from '../../options.js';
import type { Runtime } from '../../runtime.js';

/**
 * How long an attempt started at `nowMs` may take: the endpoint's
 * `attemptTimeoutMs`, cut to the window that is left (`untilMs`: the
 * deadline, or the last look's window), and never less than 1 ms.
 */
export function attemptTimeoutMs(
  policy: Pick<ResolvedPolicy, 'attemptTimeoutMs'>,
  untilMs: number,
  nowMs: number,
): number {
  return Math.max(1, Math.min(policy.attemptTimeoutMs, untilMs - nowMs));
}

interface Pending {
  atMs: number;
  onTimeout: () => void;
}

class AttemptTimeouts {
  readonly #runtime: Runtime;
  readonly #pending = new Set<Pending>();
  /** Cancels the running sleep; `undefined` when none runs. */
  #sleep: AbortController | undefined;
  /** When the running sleep ends. */
  #sleepUntilMs = Number.POSITIVE_INFINITY;
  #idleCheckQueued = false;

  constructor(runtime: Runtime) {
    this.#runtime = runtime;
  }

  /** Calls `onTimeout` once `ms` have passed, unless the returned function is called first. */
  start(ms: number, onTimeout: () => void): () => void {
    const pending: Pending = { atMs: this.#runtime.now() + ms, onTimeout };
    this.#pending.add(pending);
    if (pending.atMs < this.#sleepUntilMs) this.#sleepUntil(pending.atMs);
    return () => {
      if (this.#pending.delete(pending) && this.#pending.size === 0) this.#queueIdleCheck();
    };
  }

  #sleepUntil(atMs: number): void {
    this.#sleep?.abort(REPLACED);
    const sleep = new AbortController();
    this.#sleep = sleep;
    this.#sleepUntilMs = atMs;
    this.#runtime.sleep(Math.max(0, atMs - this.#runtime.now()), sleep.signal).then(
      () => this.#wake(sleep),
      () => {},
    );
  }

  #wake(sleep: AbortController): void {
    if (this.#sleep !== sleep) return;
    this.#sleep = undefined;
    this.#sleepUntilMs = Number.POSITIVE_INFINITY;
    const now = this.#runtime.now();
    let nextMs = Number.POSITIVE_INFINITY;
    for (const pending of [...this.#pending]) {
      if (pending.atMs <= now) {
        this.#pending.delete(pending);
        pending.onTimeout();
      } else {
        nextMs = Math.min(nextMs, pending.atMs);
      }
    }
    if (nextMs !== Number.POSITIVE_INFINITY) this.#sleepUntil(nextMs);
  }

  #queueIdleCheck(): void {
    if (this.#idleCheckQueued) return;
    this.#idleCheckQueued = true;
    this.#runtime.sleep(0).then(
      () => {
        this.#idleCheckQueued = false;
        if (this.#pending.size > 0 || this.#sleep === undefined) return;
        this.#sleep.abort(IDLE);
        this.#sleep = undefined;
        this.#sleepUntilMs = Number.POSITIVE_INFINITY;
      },
      () => {},
    );
  }
}

/** Abort reasons of our own: without one, abort() builds a DOMException (with a stack). */
const REPLACED = 'an earlier timeout came';
const IDLE = 'no attempt in flight';

const byRuntime = new WeakMap<Runtime, AttemptTimeouts>();

/** The timeouts of attempts timed by `runtime` (one set per client: each has its own runtime object). */
export function attemptTimeouts(runtime: Runtime): AttemptTimeouts {
  let timeouts = byRuntime.get(runtime);
  if (timeouts === undefined) {
    timeouts = new AttemptTimeouts(runtime);
    byRuntime.set(runtime, timeouts);
  }
  return timeouts;
}
