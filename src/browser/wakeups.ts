/**
 * Wake-ups for a tab waiting on another tab's loop (a follower's
 * `dispatch`, see drainer.ts). A follower learns that an operation may
 * have settled from hints, never the truth: a settlement announced for its
 * key, a change of leadership or of the store (wake everyone), a poll timer
 * (a missed message), or the client closing. After each it re-reads the store.
 */
import type { Shutdown } from '../flow/engine/shutdown.js';
import type { Runtime } from '../runtime.js';

export class Wakeups {
  readonly #byKey = new Map<string, Set<() => void>>();
  readonly #runtime: Pick<Runtime, 'sleep'>;
  readonly #pollMs: number;
  readonly #closed: Shutdown;

  constructor(runtime: Pick<Runtime, 'sleep'>, pollMs: number, closed: Shutdown) {
    this.#runtime = runtime;
    this.#pollMs = pollMs;
    this.#closed = closed;
  }

  /** Resolves on the next wake-up for `key`, after `pollMs`, on close, or when `signal` aborts. */
  next(key: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = new AbortController();
      let unsubscribe = (): void => undefined;
      const done = (): void => {
        timer.abort();
        this.#byKey.get(key)?.delete(done);
        if (this.#byKey.get(key)?.size === 0) this.#byKey.delete(key);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      if (this.#closed.stopped || signal?.aborted) {
        resolve();
        return;
      }
      let set = this.#byKey.get(key);
      if (set === undefined) {
        set = new Set();
        this.#byKey.set(key, set);
      }
      set.add(done);
      unsubscribe = this.#closed.onStop(done);
      signal?.addEventListener('abort', done, { once: true });
      this.#runtime.sleep(this.#pollMs, timer.signal).then(done, () => undefined);
    });
  }

  wake(key: string): void {
    for (const fn of [...(this.#byKey.get(key) ?? [])]) fn();
  }

  wakeAll(): void {
    for (const set of [...this.#byKey.values()]) for (const fn of [...set]) fn();
  }
}
