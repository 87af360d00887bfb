/**
 * The one narrow interface every store implements. The engine depends on
 * nothing else, so a store is easy to write and to prove: the shared
 * contract suite (`storeContract` in `oncely/store`) runs against each.
 *
 * Requirements (each proven by the contract suite):
 * - durable before a write resolves, unless the write says
 *   `durability: 'relaxed'` (see `WriteOptions`);
 * - `update` is an atomic read-modify-write (compare-and-set), also across
 *   tabs or processes for the durable stores;
 * - records are validated on read: a corrupt one is quarantined and
 *   reported, and every other record keeps working.
 */
import { type OperationRecord, type OperationState, writeOrder } from '../model.js';

export interface RecordFilter {
  /** Only records in this state (or any of these states). */
  state?: OperationState | readonly OperationState[];
  /** Only records whose `nextAttemptAt` is at or before this time. */
  dueBy?: number;
  /** Only records of this ordering scope. */
  scope?: string;
  /** At most this many, earliest `nextAttemptAt` first. */
  limit?: number;
}

/**
 * The few fields of a record that a pass over many records (`resume()`,
 * `sweep()`) needs to choose and order them, without holding whole records.
 */
export interface RecordSummary {
  key: string;
  state: OperationState;
  nextAttemptAt: number;
  createdAt: number;
  seq?: number;
  scope?: string;
  lease?: { owner: string; until: number };
  retainUntil?: number;
}

/** The summary of a record. */
export function summaryOf(record: OperationRecord): RecordSummary {
  const summary: RecordSummary = {
    key: record.key,
    state: record.state,
    nextAttemptAt: record.nextAttemptAt,
    createdAt: record.createdAt,
  };
  if (record.scope !== undefined) summary.scope = record.scope;
  if (record.seq !== undefined) summary.seq = record.seq;
  if (record.lease !== undefined) summary.lease = { owner: record.lease.owner, until: record.lease.until };
  if (record.retainUntil !== undefined) summary.retainUntil = record.retainUntil;
  return summary;
}

/**
 * The change function of `update`: receives the current record (or
 * `undefined`) and returns the next one. Returning the very same object (or
 * `undefined` when there was none) writes nothing. Throwing aborts the
 * update and the error propagates. Must be synchronous and pure: a store may
 * call it more than once when it has to retry a compare-and-set.
 */
export type Updater = (current: OperationRecord | undefined) => OperationRecord | undefined;

/** A record that failed validation, moved aside rather than deleted. */
export interface QuarantineEntry {
  id: string;
  problems: readonly string[];
  /** When it was moved aside. */
  at: number;
  /** The raw stored text, for forensics. */
  raw: string;
}

/**
 * How durable a write must be when it resolves. A hint: a store that cannot
 * tell the two apart (memory, PostgreSQL) makes every write durable.
 */
export interface WriteOptions {
  /**
   * `'durable'`: on stable storage before the write resolves (survives a
   * power cut). `'relaxed'`: visible to every read (and to every other
   * handle) before it resolves, like a durable write, but it may reach stable
   * storage later: a power cut (or an OS crash) may lose it, and the record
   * is then found as the last durable write left it, or as a later relaxed
   * one. Never older than that: a durable write issued after a relaxed one
   * (of any key, through the same handle) covers it, once it resolves. A
   * process crash loses nothing in either case. The same idea as IndexedDB's
   * `durability: 'relaxed'` transactions.
   *
   * The engine relaxes only writes whose loss a resend under the same key
   * repairs (the server replays its answer); see docs/stores.md, the durability
   * section.
   * @default 'durable'
   * @example await store.update(key, settle, { durability: 'relaxed' })
   */
  durability?: 'durable' | 'relaxed';
}

/**
 * What `claimDue` is asked for: up to `limit` open operations this owner may
 * send now, each with a new lease epoch.
 * @example await store.claimDue({ owner: 'worker-1', leaseMs: 30_000, limit: 16, dueBy: Date.now(), nowMs: Date.now() })
 */
export interface ClaimRequest {
  /** The claiming owner (the client's `owner`). */
  owner: string;
  /** How long each lease lasts, counted by the store's own clock from the moment it grants it. */
  leaseMs: number;
  /** At most this many records. */
  limit: number;
  /**
   * Only records whose `nextAttemptAt` is at or before this time (the
   * caller's clock: due dates are the caller's to judge, a lease is not).
   */
  dueBy: number;
  /**
   * The caller's clock now, in whole ms: each record's `lease.until` is
   * `nowMs + leaseMs` (more with a started attempt), on the clock its holder
   * judges it by.
   */
  nowMs: number;
  /**
   * Also record attempt 1 of each claimed operation that has no attempt yet
   * (pending, before its deadline, its policy stored with it) as started by
   * `owner` at `nowMs`, in the same write, as the write-ahead of a new
   * operation does when it can go at once: the claimer sends it without
   * another write before the first byte. Ask only when nothing must happen
   * before an attempt (no credentials callback, no platform check). A store
   * may ignore it (then nothing is started).
   * @default false
   */
  startFirstAttempt?: boolean;
  /**
   * Only these keys: the takeover of operations the caller waits on. The
   * scope-head rule is then the caller's (its scope queue), not the store's.
   */
  keys?: readonly string[];
}

/** Options of `delete`. */
export interface DeleteOptions {
  /**
   * Deletes only if this holds for the record as stored, judged in the same
   * atomic step as the delete (like `update`'s change function: synchronous,
   * pure, maybe called more than once). A sweep or discard judges the record
   * it read; a `retry` that reopened it meanwhile must not be deleted.
   * @example await store.delete(key, { onlyIf: (r) => r.state === 'succeeded' })
   */
  onlyIf?: (current: OperationRecord) => boolean;
}

export interface OperationStore {
  get(key: string): Promise<OperationRecord | undefined>;
  /** Creates or replaces. */
  put(record: OperationRecord, options?: WriteOptions): Promise<void>;
  /** Atomic read-modify-write; resolves with the record as stored afterwards. */
  update(key: string, fn: Updater, options?: WriteOptions): Promise<OperationRecord | undefined>;
  /** Deletes the record; with `onlyIf`, only if it still holds (see `DeleteOptions`). */
  delete(key: string, options?: DeleteOptions): Promise<void>;
  /** Earliest `nextAttemptAt` first. */
  list(filter?: RecordFilter): Promise<OperationRecord[]>;
  /**
   * Optional. The summaries of exactly the records `list(filter)` would
   * return, in the same order, with the same validation (a corrupt record is
   * quarantined and left out). For a store whose `list` has to read and
   * materialise every record (the file store), this lets `resume()` and
   * `sweep()` go through 100,000 records holding a few fields of each
   * instead of every whole record. Without it, callers use `list` and
   * `summaryOf`.
   */
  listSummaries?(filter?: RecordFilter): Promise<RecordSummary[]>;
  /**
   * Optional. Claims up to `limit` due, open operations that no one holds
   * (unleased, or leased until a time the store's own clock says has
   * passed), atomically: each comes back with its epoch bumped and leased to
   * `owner`. Only the head of each scope (its earliest open operation) is
   * claimable, so a scope's operations go one after another across a fleet.
   * Earliest due first.
   *
   * A store that has it judges every lease on one clock shared by all its
   * users (PostgreSQL's `now()`): the engine then never takes another
   * owner's lease over on its own clock's word, it asks `claimDue` (with
   * `keys`). Without it (memory, file, IndexedDB), `resume()` lists and
   * claims record by record, judging leases as flow/engine/lease-watch.ts says.
   */
  claimDue?(request: ClaimRequest): Promise<OperationRecord[]>;
  /** Records moved aside because they failed validation. */
  quarantined(): Promise<QuarantineEntry[]>;
  /**
   * Subscribe to quarantine reports. Only the handle that moved a record
   * aside reports it; other handles (tabs, processes) see it in `quarantined()`.
   * Returns an unsubscribe.
   */
  onQuarantine(fn: (entry: QuarantineEntry) => void): () => void;
  /** Releases handles (files, database connections). Optional. */
  close?(): Promise<void>;
}

/** Applies a `RecordFilter` to a list of records (shared by the stores). */
export function applyFilter(records: OperationRecord[], filter: RecordFilter = {}): OperationRecord[] {
  const states = filter.state === undefined ? undefined : ([] as OperationState[]).concat(filter.state);
  const selected = records.filter(
    (r) =>
      (states === undefined || states.includes(r.state)) &&
      (filter.dueBy === undefined || r.nextAttemptAt <= filter.dueBy) &&
      (filter.scope === undefined || r.scope === filter.scope),
  );
  selected.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || writeOrder(a) - writeOrder(b));
  return filter.limit === undefined ? selected : selected.slice(0, filter.limit);
}
