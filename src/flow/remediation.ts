/**
 * What an app does about an operation that did not simply succeed: resend
 * a `blocked` or `unknown` one with the same key (`retry`), forget one
 * (`discard`, refused while it is held or may have taken effect), and remove
 * finished records past their retention (`sweep`). Each check is made on the
 * record as stored, inside the write that acts on it.
 */
import { InvalidStateError, NotFoundError } from '../errors.js';
import type { Engine } from './engine.js';
import type { Loops } from './loops.js';
import { policyOfRecord } from './policy-snapshot.js';
import { summaries } from './resume.js';
import { guarded, type Outcome, outcomeOf } from './settle.js';
import { discardRefusal } from './settle-errors.js';
import { reopen } from './transitions.js';

/** Finished-record sweeps run at most this often from `resume()`. */
const SWEEP_INTERVAL_MS = 60_000;

export class Remediation {
  readonly #engine: Engine;
  readonly #loops: Loops;
  #lastSweepAt = Number.NEGATIVE_INFINITY;

  constructor(engine: Engine, loops: Loops) {
    this.#engine = engine;
    this.#loops = loops;
  }

  /**
   * Reopens a `blocked` or `unknown` operation (see `reopen`) with a new
   * deadline, bounded by the server's key retention, and drives it. Refused
   * once the server has forgotten the key: a resend would then run twice.
   */
  async retry(key: string): Promise<Outcome> {
    const { store, runtime, endpoints } = this.#engine;
    const now = runtime.now();
    const updated = await store.update(key, (current) => {
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
    });
    if (updated === undefined) throw new NotFoundError(key);
    return guarded(
      store,
      key,
      this.#loops.drive(key, updated.scope).then((r) => outcomeOf(r, {}, false)),
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
    await store.delete(key);
  }

  /** Removes finished records whose `retainUntil` has passed. Returns how many. */
  async sweep(): Promise<number> {
    const { store, runtime } = this.#engine;
    const now = runtime.now();
    this.#lastSweepAt = now;
    const finished = await summaries(store, { state: ['succeeded', 'blocked', 'failed', 'unknown'] });
    let removed = 0;
    for (const record of finished) {
      if (record.retainUntil !== undefined && record.retainUntil <= now) {
        await store.delete(record.key);
        removed++;
      }
    }
    return removed;
  }

  /** Sweeps unless a sweep ran within the last minute: sweeping reads every finished record. */
  async sweepIfDue(nowMs: number): Promise<void> {
    if (nowMs - this.#lastSweepAt >= SWEEP_INTERVAL_MS) await this.sweep();
  }
}
