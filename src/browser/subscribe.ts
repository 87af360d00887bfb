/**
 * A live view of the queue for UIs: "2 payments waiting — offline",
 * "sending (attempt 2)…", "needs sign-in".
 *
 * `snapshotOf` is pure: stored records + the client's status → a plain,
 * serialisable snapshot. `LiveView` re-reads the store whenever anything
 * may have changed (an event of this client, a message from another tab,
 * a change of connectivity or leadership) and hands each subscriber a new
 * snapshot only when what it shows changed. Reads are coalesced: at most
 * one runs at a time, and a burst of events costs one more read, not one
 * per event.
 */

import type { countAttempts, OPERATION_STATES, writeOrder } from '../model/vocabulary.js';
import type { AttemptClass, OperationRecord, OperationState, StopReason } from '../model.js';
import type { LeaderMode } from './leader.js';
import type { WipeReport } from './persistence.js';

/** One operation as a UI shows it. */
export interface OperationView {
  key: string;
  state: OperationState;
  method: string;
  url: string;
  scope: string | undefined;
  /** `meta.userId` when the operation was stamped with a user. */
  userId: string | undefined;
  meta: Readonly<Record<string, unknown>> | undefined;
  createdAt: number;
  /** Write-ahead order (views list operations by it). */
  order: number;
  deadlineAt: number;
  /** When the next attempt is due (pending operations). */
  nextAttemptAt: number;
  /** Attempts that may have reached the server (as `SendResult.attempts`; unsent ones are free). */
  attempts: number;
  /** Tries that provably never left (connection refused, offline): `tries` is `attempts + notSent`. */
  notSent: number;
  /** Every attempt, unsent ones included: the number of the latest. */
  tries: number;
  lastAttempt:
    | {
        n: number;
        class: AttemptClass | undefined;
        status: number | undefined;
        startedAt: number;
        endedAt: number | undefined;
      }
    | undefined;
  /** Why it stopped, for `blocked`, `failed` and `unknown`. */
  failure: { reason: StopReason; message: string; remediation: string; status: number | undefined } | undefined;
}

export interface ClientStatus {
  /** This tab is the drainer (always true in "leases" mode). */
  leader: boolean;
  mode: LeaderMode;
  /** The client would attempt now (not offline, not paused after an unreachable attempt). */
  online: boolean;
  storage: {
    /** The answer of `navigator.storage.persist()`, when asked. */
    persisted: boolean | undefined;
    /** Set once the database was found wiped. */
    wiped: WipeReport | undefined;
  };
}

export interface QueueSnapshot extends ClientStatus {
  /** Oldest first. */
  operations: OperationView[];
  /** How many operations are in each state. */
  counts: Record<OperationState, number>;
  /** Operations not yet settled (`pending` + `in_flight`). */
  active: number;
}

export interface SubscribeOptions {
  /** Only operations in these states. @default every state */
  states?: readonly OperationState[];
  /** Only the operations of this user (`meta.userId`). @default the client's current user, when `user` is configured */
  userId?: string | undefined;
}

/**
 * The model's words the view reads, handed over by the client, not
 * imported: this module is loaded later, and a chunk loaded later that
 * imports a module the page already has makes a bundler split that module
 * into a chunk of its own, one more file before the first send (issue 33).
 */
export interface ViewVocabulary {
  countAttempts: typeof countAttempts;
  OPERATION_STATES: typeof OPERATION_STATES;
  writeOrder: typeof writeOrder;
}

export function viewOf(vocabulary: ViewVocabulary, record: OperationRecord): OperationView {
  const { countAttempts, writeOrder } = vocabulary;
  const last = record.attempts[record.attempts.length - 1];
  const userId = record.meta?.userId;
  return {
    key: record.key,
    state: record.state,
    method: record.request.method,
    url: record.request.url,
    scope: record.scope,
    userId: typeof userId === 'string' ? userId : undefined,
    meta: record.meta,
    createdAt: record.createdAt,
    order: writeOrder(record),
    deadlineAt: record.deadlineAt,
    nextAttemptAt: record.nextAttemptAt,
    ...countAttempts(record.attempts, record.attemptsOmitted),
    tries: record.attempts[record.attempts.length - 1]?.n ?? 0,
    lastAttempt:
      last === undefined
        ? undefined
        : { n: last.n, class: last.class, status: last.status, startedAt: last.startedAt, endedAt: last.endedAt },
    failure:
      record.failure === undefined
        ? undefined
        : {
            reason: record.failure.reason,
            message: record.failure.message,
            remediation: record.failure.remediation,
            status: record.failure.status,
          },
  };
}

/** Pure: the snapshot a subscriber with `options` sees. */
export function snapshotOf(
  vocabulary: ViewVocabulary,
  records: readonly OperationRecord[],
  status: ClientStatus,
  options: SubscribeOptions = {},
): QueueSnapshot {
  const selected = records
    .filter((r) => options.states === undefined || options.states.includes(r.state))
    .filter((r) => !('userId' in options) || options.userId === undefined || r.meta?.userId === options.userId)
    .map((r) => viewOf(vocabulary, r))
    .sort((a, b) => a.order - b.order || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const counts = Object.fromEntries(vocabulary.OPERATION_STATES.map((s) => [s, 0])) as Record<OperationState, number>;
  for (const view of selected) counts[view.state]++;
  return {
    ...status,
    storage: { ...status.storage },
    operations: selected,
    counts,
    active: counts.pending + counts.in_flight,
  };
}

export type Subscriber = (snapshot: QueueSnapshot) => void;

export interface LiveViewOptions {
  load: () => Promise<OperationRecord[]>;
  status: () => ClientStatus;
  /** The user a subscriber sees by default. */
  currentUser: () => string | undefined;
  /** A subscriber threw, or a read failed. */
  onError: (error: unknown) => void;
  vocabulary: ViewVocabulary;
}

interface Subscription {
  fn: Subscriber;
  options: SubscribeOptions;
  last: string | undefined;
}

export class LiveView {
  readonly #options: LiveViewOptions;
  readonly #subscriptions = new Set<Subscription>();
  #reading: Promise<void> | undefined;
  #again = false;

  constructor(options: LiveViewOptions) {
    this.#options = options;
  }

  subscribe(fn: Subscriber, options: SubscribeOptions = {}): () => void {
    const resolved: SubscribeOptions =
      'userId' in options ? options : { ...options, userId: this.#options.currentUser() };
    const subscription: Subscription = { fn, options: resolved, last: undefined };
    this.#subscriptions.add(subscription);
    this.refresh();
    return () => this.#subscriptions.delete(subscription);
  }

  /** Re-reads the store soon; resolves when the subscribers have the result. */
  refresh(): Promise<void> {
    if (this.#subscriptions.size === 0) return Promise.resolve();
    if (this.#reading !== undefined) {
      this.#again = true;
      return this.#reading;
    }
    const reading = (async () => {
      do {
        this.#again = false;
        await this.#readOnce();
      } while (this.#again);
    })().finally(() => {
      this.#reading = undefined;
    });
    this.#reading = reading;
    return reading;
  }

  async #readOnce(): Promise<void> {
    let records: OperationRecord[];
    try {
      records = await this.#options.load();
    } catch (error) {
      this.#options.onError(error);
      return;
    }
    const status = this.#options.status();
    for (const subscription of [...this.#subscriptions]) {
      const snapshot = snapshotOf(this.#options.vocabulary, records, status, subscription.options);
      const text = JSON.stringify(snapshot);
      if (text === subscription.last) continue;
      subscription.last = text;
      try {
        subscription.fn(snapshot);
      } catch (error) {
        this.#options.onError(error);
      }
    }
  }
}
