/**
 * What an app does about an operation that did not simply succeed: resend
 * a `blocked` or `unknown` one with the same key (`retry`), forget one
 * (`discard`, refused while it is held or may have taken effect), and remove
 * finished records past their retention (`sweep`). Each check is made on the
 * record as stored, inside the write that acts on it.
 */
import { InvalidStateError, NotFoundError } from '../../errors.js';
import { isTerminal, type OperationRecord, TERMINAL_STATES } from '../../model.js';
import { policyOfRecord } from '../decide/policy-snapshot.js';
import { reopen } from '../decide/transitions.js';
import type { Loops } from '../drive/loops.js';
import type { Engine } from '../engine/engine.js';
import { summaries } from './resume.js';
import { guarded, type Outcome, outcomeOf } from './settle.js';
import { discardRefusal, liveProfile } from './settle-errors.js';
import { beforeSending } from './store-failure.js';

/** The client option `sweepIntervalMs`: 10 minutes. */
export const DEFAULT_SWEEP_INTERVAL_MS = 600_000;

export class Remediation {
  readonly #engine: Engine;
  readonly #loops: Loops;
  readonly #sweepIntervalMs: number;
  #lastSweepAt = Number.NEGATIVE_INFINITY;
  /** The sweep running now, if one is. */
  #sweeping: Promise<void> | undefined;

  constructor(engine: Engine, loops: Loops, sweepIntervalMs: number = DEFAULT_SWEEP_INTERVAL_MS) {
    this.#engine = engine;
    this.#loops = loops;
    this.#sweepIntervalMs = sweepIntervalMs;
  }

  /**
   * Reopens a `blocked` or `unknown` operation (see `reopen`) with a new
   * deadline, bounded by the server's key retention, and drives it. Refused
   * once the server has forgotten the key: a resend would then run twice.
   */
  async retry(key: string): Promise<Outcome> {
    const { store, runtime, endpoints } = this.#engine;
    const now = runtime.now();
    // Reopened before it is driven: a store failure here sent nothing.
    const updated = await beforeSending(
      key,
      store.update(key, (current) => {
        if (current === undefined) throw new NotFoundError(key);
        if (current.state !== 'blocked' && current.state !== 'unknown') {
          throw new InvalidStateError(
            key,
            current.state,
            `Only blocked or unknown operations can be retried (${key} is ${current.state})`,
          );
        }
        const policy = policyOfRecord(endpoints, current);
        const forgottenAt = current.createdAt + policy.keyRetentionMs;
        if (now >= forgottenAt) {
          throw new InvalidStateError(
            key,
            current.state,
            `The server has forgotten key ${key} (retention ended); send a new operation instead`,
          );
        }
        return reopen(current, now, Math.min(now + policy.deadlineMs, forgottenAt));
      }),
    );
    if (updated === undefined) throw new NotFoundError(key);
    return guarded(
      store,
      key,
      this.#loops
        .drive(key, updated.scope)
        .then((r) => outcomeOf(r, {}, false, liveProfile(this.#engine.endpoints, r))),
    );
  }

  /** Deletes an operation, unless `discardRefusal` (or a loop of this client running it) forbids it. */
  async discard(key: string, force: boolean): Promise<void> {
    const { store, runtime } = this.#engine;
    if (this.#loops.isRunning(key))
      throw new InvalidStateError(key, 'in_flight', `Operation ${key} is being driven; it cannot be discarded now`);
    // Checked on the record as stored right before deleting it (not on a copy read earlier).
    let refusal: InvalidStateError | undefined;
    let found = false;
    await store.update(key, (current) => {
      found = current !== undefined;
      if (current === undefined) return undefined;
      refusal = discardRefusal(current, runtime.now(), force);
      return current;
    });
    if (!found) throw new NotFoundError(key);
    if (refusal !== undefined) throw refusal;
    // Judged again in the delete itself: a `retry` landing in between reopens what was just allowed.
    await store.delete(key, { onlyIf: (current) => discardRefusal(current, runtime.now(), force) === undefined });
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
