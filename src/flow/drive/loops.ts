/**
 * Which loops a client runs: at most one per key (a second `send` of the
 * same key, a `resume()` pass and a `retry` join the loop already running
 * instead of starting a rival one), and the operations of one scope one
 * after another, each behind the one admitted before it.
 */
import { NotFoundError } from '../../errors.js';
import { isTerminal, type OperationRecord } from '../../model.js';
import { mayHaveTakenEffect } from '../decide/decide.js';
import type { Engine } from '../engine/engine.js';
import { interruptionError } from './interruption.js';
import { mayAttemptNow } from './may-attempt.js';
import { pause } from './pause.js';
import { removedError, runOperation, type Written } from './run.js';

export type { StartedAttempt, Written } from './run.js';

/** The loop ahead in the scope failed and its operation is still open: see `Loops.#headOpen`. */
const HEAD_STUCK: unique symbol = Symbol('head stuck');

/**
 * The error of an operation that was not started because the one ahead of
 * it in its scope failed without settling: it stays stored and pending, and
 * `resume()` drives the scope again from its head, in order.
 */
async function heldBehind(engine: Engine, key: string, scope: string | undefined, head: string | undefined) {
  const record = await engine.store.get(key).catch(() => undefined);
  const maybe = record !== undefined && mayHaveTakenEffect(record);
  return interruptionError(engine.runtime, { kind: 'held', key, record, maybe, scope, head });
}

/** Who runs a loop once it is its scope's turn (the client option `dispatch`). */
export type Dispatch = (
  key: string,
  run: (signal?: AbortSignal) => Promise<OperationRecord>,
  signal?: AbortSignal,
) => Promise<OperationRecord>;

/** The last run driven in a scope; `heldBy`: the stuck head it was held behind, if it was. */
interface ScopeTail {
  key: string;
  run: Promise<OperationRecord>;
  heldBy?: ScopeTail;
}

export class Loops {
  readonly #engine: Engine;
  readonly #dispatch: Dispatch | undefined;
  /** The loop of each key, while it runs. */
  readonly #running = new Map<string, Promise<OperationRecord>>();
  /** The last loop of each scope, and its key: the next one of that scope starts when it ends. */
  readonly #scopeTails = new Map<string, ScopeTail>();

  constructor(engine: Engine, dispatch: Dispatch | undefined) {
    this.#engine = engine;
    this.#dispatch = dispatch;
  }

  /**
   * Runs the loop of `key`, or joins the one running. With `busy: 'skip'`
   * the loop returns at once when another owner holds the record; `written`
   * is a record this client has just written ahead (see `runOperation`).
   *
   * `held` is given by a `resume()` pass that skips busy records: the scopes
   * in which it left an operation open (another owner holds it). The rest of
   * such a scope must not start before that operation ends, and this process
   * would not otherwise know: its own queue orders only what it drives.
   */
  drive(
    key: string,
    scope: string | undefined,
    signal?: AbortSignal,
    busy: 'wait' | 'skip' = 'wait',
    written?: Written,
    held?: Set<string>,
  ): Promise<OperationRecord> {
    const existing = this.#running.get(key);
    if (existing !== undefined) return existing;
    // A failed run of this very key stays its scope's tail (see `cleanup`): driven again, it takes its own place.
    const tail = scope === undefined ? undefined : this.#scopeTails.get(scope);
    const previous = tail?.key === key ? undefined : tail;
    const engine = this.#engine;
    const dispatch = this.#dispatch;
    const holdsBack = (record: OperationRecord | undefined): boolean =>
      scope !== undefined && held !== undefined && record !== undefined && !isTerminal(record.state);
    /** This run, for the body below (which only reads it after its first `await`). */
    const self: Partial<ScopeTail> = {};
    const run = (async () => {
      const before = previous === undefined ? undefined : await this.#headOpen(previous);
      // Held behind a stuck head, this run never becomes the scope's tail: the head stays it.
      // The head is the stuck run `previous` was itself held behind, if it was: the first of the queue, not
      // its neighbour (otherwise a later pass, driving the head first, would wait behind one held behind it).
      if (before === HEAD_STUCK && scope !== undefined && previous !== undefined) {
        const head = previous.heldBy ?? previous;
        self.heldBy = head;
        if (this.#scopeTails.get(scope)?.run === self.run) this.#scopeTails.set(scope, head);
      }
      if (before === HEAD_STUCK && (scope === undefined || held === undefined)) {
        throw await heldBehind(engine, key, scope, previous?.key);
      }
      // A resume pass: the rest of a scope whose head is held elsewhere, or stuck, waits for a later pass.
      if (
        scope !== undefined &&
        held !== undefined &&
        (before === HEAD_STUCK || held.has(scope) || holdsBack(before))
      ) {
        held.add(scope);
        const current = await engine.store.get(key);
        if (current === undefined) throw new NotFoundError(key);
        return current;
      }
      // A record in this process's memory is no other tab's or process's to send.
      const record =
        dispatch === undefined || this.runsHere(key)
          ? await runOperation(engine, key, signal, busy, written)
          : await dispatch(key, (s) => runOperation(engine, key, s, busy), signal);
      // Marked before this run settles, so a later drive of the scope sees it once the queue has moved on.
      if (holdsBack(record) && scope !== undefined) held?.add(scope);
      return record;
    })();
    self.key = key;
    self.run = run;
    this.#running.set(key, run);
    if (scope !== undefined) this.#scopeTails.set(scope, self as ScopeTail);
    const cleanup = (failed: boolean): void => {
      if (this.#running.get(key) === run) this.#running.delete(key);
      // A failed run stays the tail: whatever is driven next in the scope asks the store whether it is
      // still open (`#headOpen`), and waits if it is. Forgetting it would let the next one start first.
      if (!failed && scope !== undefined && this.#scopeTails.get(scope)?.run === run) this.#scopeTails.delete(scope);
    };
    run.then(
      () => cleanup(false),
      () => cleanup(true),
    );
    return run;
  }

  /**
   * Drives until terminal. Joining a `resume()` pass that skips busy records
   * can return early; then drive again, waiting for the other owner. One
   * the platform holds back (`mayAttempt`) waits a poll interval between looks.
   */
  async driveToEnd(
    key: string,
    scope: string | undefined,
    signal?: AbortSignal,
    written?: Written,
  ): Promise<OperationRecord> {
    const engine = this.#engine;
    let record = await this.drive(key, scope, signal, 'wait', written);
    while (!isTerminal(record.state) && !engine.shutdown.stopped && signal?.aborted !== true) {
      // Held back by the platform (`mayAttempt`: the browser's signed-in user is someone else now): a
      // dispatcher hands such a record straight back, so it is looked at again after a pause, not at once.
      if (!mayAttemptNow(engine, record) && !(await pause(engine, engine.pollMs, signal))) break;
      const known = record;
      // Removed meanwhile (`clear()`, `discard`): said with what this loop knew, never a bare "not found".
      record = await this.drive(key, scope, signal).catch(async (error: unknown) => {
        throw error instanceof NotFoundError ? await removedError(engine, key, known) : error;
      });
    }
    return record;
  }

  /**
   * How the loop ahead in a scope ended: its record, or `HEAD_STUCK` when it
   * failed (a store error, say) and its operation is still open as stored, or
   * cannot be read: then nothing behind it may start (DESIGN.md principle 12).
   * A head that failed but is settled, or was removed, holds nothing back.
   */
  async #headOpen(head: {
    key: string;
    run: Promise<OperationRecord>;
  }): Promise<OperationRecord | undefined | typeof HEAD_STUCK> {
    try {
      return await head.run;
    } catch {
      const stored = await this.#engine.store.get(head.key).then(
        (record) => ({ record }),
        () => undefined,
      );
      if (stored === undefined || (stored.record !== undefined && !isTerminal(stored.record.state))) return HEAD_STUCK;
      return stored.record;
    }
  }

  /** The loop of `key` would run in this client, not be dispatched elsewhere (another tab). */
  runsHere(key: string): boolean {
    return this.#dispatch === undefined || this.#engine.store.inMemory(key);
  }

  /** A loop of `key` is running in this client. */
  isRunning(key: string): boolean {
    return this.#running.has(key);
  }

  /** Resolves once every loop running now has ended, however it ended. */
  async ended(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }
}
