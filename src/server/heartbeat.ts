/**
 * Lease renewal while handlers run. A claim's lease is how the next request
 * tells a dead claimer from a slow one; a handler that runs longer than its
 * lease must keep saying "still here", or a duplicate would be told
 * "outcome unknown" (or, under `rerun: 'safe'`, run it a second time) while
 * the first run is still going. A running claim's lease is renewed about
 * every third of it, fenced by its epoch: once a newer epoch owns the key
 * (or the outcome is stored), the store refuses and renewal stops. A process
 * that dies renews nothing, so its claim still ends at its lease.
 *
 * One timer per guard, not one per request: the running claims sit in a
 * list, and a tick every sixth of the shortest lease renews those due (a
 * handler that finishes within a sixth of its lease is never renewed).
 * Every path that ends a run removes its claim from the list (`stop`). The
 * timer is not cancelled when the list empties: a busy server's list empties
 * between most requests, and a timer made and cancelled per request cost
 * more than the rest of the renewal. A tick that finds the list empty arms
 * no next one, so the timer outlives the last run by one tick at most (and
 * never keeps a Node.js process alive: `scheduleWithTimers` unrefs it).
 */
import type { Claim, IdempotencyStore } from './store.js';

/** `schedule(ms, fn)` calls `fn` once after `ms` and returns a cancel (the runtime's `schedule`). */
export type Schedule = (ms: number, fn: () => void) => () => void;

/** A running claim (a class: one made per guarded request, and the engine keeps classes compact). */
export class Beat {
  renewing = false;
  /** Its place in the running list; -1 once stopped. */
  slot = -1;

  constructor(
    readonly claim: Claim,
    readonly leaseMs: number,
    /** Renewed every this many ticks (at least 2: never in the tick it started in). */
    readonly everyTicks: number,
    readonly startTick: number,
  ) {}
}

export class Heartbeats {
  readonly #store: Pick<IdempotencyStore<unknown>, 'renew'>;
  readonly #schedule: Schedule;
  readonly #tickMs: number;
  /**
   * The running claims, a list with no holes: a beat leaves by the last one
   * taking its slot (a `Set` shrank and grew its table as a busy server's
   * runs came and went, a cost on every request).
   */
  readonly #running: Beat[] = [];
  #tick = 0;
  /** A tick is scheduled. */
  #armed = false;

  /** `shortestLeaseMs`: the shortest lease of any route, which sets the tick. */
  constructor(store: Pick<IdempotencyStore<unknown>, 'renew'>, schedule: Schedule, shortestLeaseMs: number) {
    this.#store = store;
    this.#schedule = schedule;
    this.#tickMs = Math.max(1, Math.floor(shortestLeaseMs / 6));
  }

  /** Renews `claim`'s lease while it runs; `stop` the returned beat when the run ends, however it ends. */
  start(claim: Claim, leaseMs: number): Beat {
    const beat = new Beat(claim, leaseMs, Math.max(2, Math.floor(leaseMs / 3 / this.#tickMs)), this.#tick);
    beat.slot = this.#running.push(beat) - 1;
    this.#armed ||= this.#arm();
    return beat;
  }

  /** The run of `beat` ended: no more renewals. */
  stop(beat: Beat): void {
    const running = this.#running;
    if (beat.slot < 0) return;
    const last = running.pop() as Beat;
    if (last !== beat) {
      running[beat.slot] = last;
      last.slot = beat.slot;
    }
    beat.slot = -1;
  }

  #arm(): true {
    this.#schedule(this.#tickMs, this.#onTick);
    return true;
  }

  /** Claims being renewed now (for tests). */
  get running(): number {
    return this.#running.length;
  }

  readonly #onTick = (): void => {
    this.#tick += 1;
    for (const beat of this.#running) {
      const age = this.#tick - beat.startTick;
      if (beat.renewing || age % beat.everyTicks !== 0) continue;
      beat.renewing = true;
      this.#store.renew(beat.claim, beat.leaseMs).then(
        (owned) => {
          beat.renewing = false;
          // Taken over or finished: the store has nothing of this epoch left to renew.
          if (!owned) this.stop(beat);
        },
        () => {
          // Unreachable now, perhaps not at the next beat; the lease runs on meanwhile.
          beat.renewing = false;
        },
      );
    }
    // Nothing runs any more: no next tick (the next `start` arms one).
    this.#armed = this.#running.length > 0 && this.#arm();
  };
}

/** The default `schedule`: a timer that never keeps a Node.js process alive. */
export const scheduleWithTimers: Schedule = (ms, fn) => {
  const timer: unknown = setTimeout(fn, ms);
  (timer as { unref?: () => void }).unref?.();
  return () => clearTimeout(timer as ReturnType<typeof setTimeout>);
};
