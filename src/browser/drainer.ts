/**
 * Who sends, and how many at once: the `dispatch` hook the browser client
 * plugs into the core client.
 *
 * - The drainer tab (see leader.ts) runs the core loop for an operation
 *   under a concurrency limit (`slots`). Scope order comes from the core:
 *   an operation is dispatched only once the previous one of its scope has
 *   settled, so a waiting scope never holds a slot.
 * - Any other tab ("follower") never runs the loop: it tells the drainer
 *   that there is work (`kick`) and waits until the operation settles
 *   (a settlement announced over the tab channel, or a poll of the store),
 *   then resolves with the record as the drainer stored it. If it becomes
 *   the drainer meanwhile, it drives the operation itself.
 *
 * In "locks" mode the drainer fences off a lease held by any other owner
 * before it drives (the epoch is bumped, so a stale owner's writes are
 * refused): by the election invariant that owner is gone.
 */
import { NotFoundError } from '../errors.js';
import { fenceForeign } from '../flow/decide/transitions.js';
import type { Shutdown } from '../flow/engine/shutdown.js';
import { isTerminal, type OperationRecord } from '../model.js';
import type { OperationStore } from '../store/store.js';
import type { Leadership } from './leader.js';

/** A counting semaphore; `acquire` resolves with the release function. */
export class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#free = limit;
  }

  get free(): number {
    return this.#free;
  }

  /** Resolves when a slot is ours, or with undefined when the client stops or `signal` aborts first. */
  acquire(shutdown: Shutdown, signal?: AbortSignal): Promise<(() => void) | undefined> {
    if (shutdown.stopped || signal?.aborted) return Promise.resolve(undefined);
    const grant = (): (() => void) => {
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const next = this.#waiting.shift();
        if (next === undefined) this.#free++;
        else next();
      };
    };
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(grant());
    }
    return new Promise((resolve) => {
      let unsubscribe = (): void => undefined;
      const detach = (): void => {
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        detach();
        const index = this.#waiting.indexOf(take);
        if (index >= 0) this.#waiting.splice(index, 1);
        resolve(undefined);
      };
      const take = (): void => {
        detach();
        resolve(grant());
      };
      this.#waiting.push(take);
      unsubscribe = shutdown.onStop(onAbort);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * Takes away a lease another owner holds on a live record: drops it and
 * bumps the epoch, so that owner's next write (if it were still around) is
 * refused. The open attempt, if any, is then closed as ambiguous by the
 * next claim: it may have reached the server, so the same key is reused.
 * Only the lock-holding drainer may call this.
 */
export function fenceForeignLease(store: OperationStore, key: string, owner: string): Promise<unknown> {
  return store.update(key, (current) => (current === undefined ? current : fenceForeign(current, owner)));
}

export interface DispatcherOptions {
  store: OperationStore;
  /** This client's lease owner id. */
  owner: string;
  leadership: Leadership;
  slots: Slots;
  /** Whether this tab may send `record` now (e.g. it belongs to the signed-in user). */
  sendable: (record: OperationRecord) => boolean;
  /** Tells the drainer tab there is new work. */
  kick: () => void;
  /** Resolves on the next hint that `key` may have changed (or after a poll interval). */
  nextChange: (key: string, signal: AbortSignal | undefined) => Promise<void>;
  /** Stopped when the browser client closes. */
  closed: Shutdown;
}

export type Dispatch = (
  key: string,
  run: (signal?: AbortSignal) => Promise<OperationRecord>,
  signal?: AbortSignal,
) => Promise<OperationRecord>;

export interface Dispatcher {
  dispatch: Dispatch;
  /** Keys this tab is driving or waiting on right now. */
  readonly busy: ReadonlySet<string>;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { store, owner, leadership, slots, closed } = options;
  const busy = new Set<string>();

  async function stored(key: string): Promise<OperationRecord> {
    const record = await store.get(key);
    if (record === undefined) throw new NotFoundError(key);
    return record;
  }

  const dispatch: Dispatch = async (key, run, signal) => {
    busy.add(key);
    try {
      return await dispatchOnce(key, run, signal);
    } finally {
      busy.delete(key);
    }
  };

  const dispatchOnce: Dispatch = async (key, run, signal) => {
    let kicked = false;
    for (;;) {
      if (closed.stopped) return stored(key);
      if (leadership.isLeader()) {
        // A caller's abort skips the queue: the loop then settles it as `aborted` without sending.
        const release = await slots.acquire(closed, signal);
        if (closed.stopped) {
          release?.();
          return stored(key);
        }
        try {
          const record = await stored(key);
          if (isTerminal(record.state) || !options.sendable(record)) return record;
          if (leadership.mode === 'locks') await fenceForeignLease(store, key, owner);
          return await run(signal);
        } finally {
          release?.();
        }
      }
      // A follower stops waiting when its caller aborts; the drainer still sends the operation.
      if (signal?.aborted) return stored(key);
      if (!kicked) {
        kicked = true;
        options.kick();
      }
      await options.nextChange(key, signal);
      const record = await stored(key);
      if (isTerminal(record.state)) return record;
    }
  };

  return { dispatch, busy };
}
