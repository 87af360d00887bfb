/**
 * Which loops a client runs: at most one per key (a second `send` of the
 * same key, a `resume()` pass and a `retry` join the loop already running
 * instead of starting a rival one), and the operations of one scope one
 * after another, each behind the one admitted before it.
 */
import { NotFoundError } from '../../errors.js';
import { isTerminal, type OperationRecord } from '../../model.js';
import type { Engine } from '../engine/engine.js';
import { mayAttemptNow } from './before-attempt.js';
import { removedError, runOperation, type Written } from './run.js';
import { pause } from './waits.js';

export type { StartedAttempt, Written } from './run.js';

/** Who runs a loop once it is its scope's turn (the client option `dispatch`). */
export type Dispatch = (
  key: string,
  run: (signal?: AbortSignal) => Promise<OperationRecord>,
  signal?: AbortSignal,
) => Promise<OperationRecord>;

export class Loops {
  readonly #engine: Engine;
  readonly #dispatch: Dispatch | undefined;
  /** The loop of each key, while it runs. */
  readonly #running = new Map<string, Promise<OperationRecord>>();
  /** The last loop of each scope: the next one of that scope starts when it ends. */
  readonly #scopeTails = new Map<string, Promise<OperationRecord>>();

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
    const previous = scope === undefined ? undefined : this.#scopeTails.get(scope);
    const engine = this.#engine;
    const dispatch = this.#dispatch;
    const holdsBack = (record: OperationRecord | undefined): boolean =>
      scope !== undefined && held !== undefined && record !== undefined && !isTerminal(record.state);
    const run = (async () => {
      const before = previous === undefined ? undefined : await previous.catch(() => undefined);
      if (scope !== undefined && held !== undefined && (held.has(scope) || holdsBack(before))) {
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
    this.#running.set(key, run);
    if (scope !== undefined) this.#scopeTails.set(scope, run);
    const cleanup = (): void => {
      if (this.#running.get(key) === run) this.#running.delete(key);
      if (scope !== undefined && this.#scopeTails.get(scope) === run) this.#scopeTails.delete(scope);
    };
    run.then(cleanup, cleanup);
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
      record = await this.drive(key, scope, signal).catch((error: unknown) => {
        throw error instanceof NotFoundError ? removedError(key, known, engine.owner) : error;
      });
    }
    return record;
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
