/**
 * What an app does about an operation that did not simply succeed: resend
 * a `blocked` or `unknown` one with the same key (`retry`), forget one
 * (`discard`, refused while it is held or may have taken effect), and remove
 * finished records past their retention (`sweep`; `retry` and `discard`
 * themselves are in remedies.ts, loaded on first use). Each check is made on the
 * record as stored, inside the write that acts on it.
 */
import { isTerminal, type OperationRecord, TERMINAL_STATES } from '../../model.js';
import type { Loops } from '../drive/loops.js';
import type { Engine } from '../engine/engine.js';
import { lazy } from './lazy.js';
import { REMEDY_KIT } from './remedy-kit.js';
import { summaries } from './resume.js';
import type { Outcome } from './settle.js';

/** The client option `sweepIntervalMs`: 10 minutes. */
export const DEFAULT_SWEEP_INTERVAL_MS = 600_000;

export class Remediation {
  readonly #engine: Engine;
  readonly #loops: Loops;
  readonly #sweepIntervalMs: number;
  /**
   * `retry` and `discard`, loaded with `import()` on the first of them: calls an app makes about an operation
   * that did not simply succeed, never on the way to a first send. A failed load rejects that call and leaves
   * the record as it was; the next call loads again.
   */
  readonly #remedies: () => Promise<typeof import('./remedies.js')>;
  #lastSweepAt = Number.NEGATIVE_INFINITY;
  /** The sweep running now, if one is. */
  #sweeping: Promise<void> | undefined;

  constructor(engine: Engine, loops: Loops, sweepIntervalMs: number = DEFAULT_SWEEP_INTERVAL_MS) {
    this.#engine = engine;
    this.#loops = loops;
    this.#sweepIntervalMs = sweepIntervalMs;
    this.#remedies = lazy(() => import('./remedies.js'), engine.runtime);
  }

  /** Reopens a `blocked` or `unknown` operation and drives it (remedies.ts; loaded on first use). */
  async retry(key: string): Promise<Outcome> {
    return (await this.#remedies()).retry(REMEDY_KIT, this.#engine, this.#loops, key);
  }

  /** Deletes an operation unless it must not be (remedies.ts; loaded on first use). */
  async discard(key: string, force: boolean): Promise<void> {
    return (await this.#remedies()).discard(REMEDY_KIT, this.#engine, this.#loops, key, force);
  }

  /** Removes finished records whose `retainUntil` has passed. Returns how many. */
  async sweep(): Promise<number> {
    const { store, runtime } = this.#engine;
    const now = runtime.now();
    this.#lastSweepAt = now;
    const finished = await summaries(store, { state: TERMINAL_STATES });
    let removed = 0;
    for (const summary of finished) {
      if (!isExpired(summary, now) || this.#loops.isRunning(summary.key)) continue;
      // Judged again as stored, in the delete itself: `retry(key)` may have reopened it since the list was read.
      let expired = false;
      await store.delete(summary.key, { onlyIf: (current) => (expired = isExpired(current, now)) });
      if (expired) removed++;
    }
    return removed;
  }

  /**
   * Starts a sweep unless one ran within `sweepIntervalMs` (on the client's
   * clock) or is running: the client's first use sweeps, and then at most
   * once per interval, so records past their retention leave the store
   * without the app calling `sweep()`. Resolves when that sweep ends; a
   * failed sweep is reported as an `error` event (`event: 'sweep'`), never
   * to the caller whose request started it.
   */
  sweepIfDue(): Promise<void> {
    if (this.#sweeping !== undefined) return this.#sweeping;
    // A closed client may have closed its store: a late call must not start work on it.
    if (this.#engine.shutdown.stopped) return Promise.resolve();
    if (this.#engine.runtime.now() - this.#lastSweepAt < this.#sweepIntervalMs) return Promise.resolve();
    const sweeping = this.sweep().then(
      () => undefined,
      (error: unknown) => this.#engine.events.emit('error', { error, event: 'sweep' }),
    );
    this.#sweeping = sweeping;
    void sweeping.then(() => {
      if (this.#sweeping === sweeping) this.#sweeping = undefined;
    });
    return sweeping;
  }

  /** Resolves once no sweep is running (the client waits for it before closing its store). */
  async idle(): Promise<void> {
    await this.#sweeping;
  }
}

function isExpired(
  record: { state: OperationRecord['state']; retainUntil?: number | undefined },
  nowMs: number,
): boolean {
  return isTerminal(record.state) && record.retainUntil !== undefined && record.retainUntil <= nowMs;
}
