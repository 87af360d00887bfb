/**
 * Record summaries (store.ts `RecordSummary`) packed in columns: keys in a
 * `PackedStrings`, due time, creation time, `seq` and state in typed arrays,
 * and the fields few records have (scope, lease, retention) aside. A resume
 * pass over 100,000 open records orders them from this, holding ~7 MB of
 * buffers instead of ~12 MB of heap objects (why that matters: packed-strings.ts).
 *
 * A store whose listing reads every record itself (the file store) fills
 * one as it reads, and registers that listing (packed-listing.ts). Any other
 * store's summaries are packed by the caller (`PackedSummaries.of`).
 */
import type { OperationState } from '../model.js';
import { PackedStrings } from './packed-strings.js';
import type { RecordSummary } from './store.js';

/** A record's creation order (model/vocabulary.ts `writeOrder`), handed in: this module imports only types. */
type WriteOrder = (record: { seq?: number | undefined; createdAt: number }) => number;

type Extras = Pick<RecordSummary, 'scope' | 'lease' | 'retainUntil'>;

/** What `add` reads: a summary's fields (of a summary, or of a whole record). */
type Summarised = Pick<RecordSummary, 'key' | 'state' | 'nextAttemptAt' | 'createdAt'> & {
  seq?: number | undefined;
  scope?: string | undefined;
  lease?: { owner: string; until: number } | undefined;
  retainUntil?: number | undefined;
};

export class PackedSummaries {
  readonly keys = new PackedStrings();
  #due = new Float64Array(256);
  #created = new Float64Array(256);
  /** NaN: no `seq`. */
  #seq = new Float64Array(256);
  /** Index into `#stateNames`. */
  #state = new Uint8Array(256);
  readonly #stateNames: OperationState[] = [];
  readonly #extras = new Map<number, Extras>();

  /** `summaries`, packed (for a store without a packed listing). */
  static of(summaries: readonly RecordSummary[]): PackedSummaries {
    const packed = new PackedSummaries();
    for (const summary of summaries) packed.add(summary);
    return packed;
  }

  get length(): number {
    return this.keys.length;
  }

  /** Appends the summary of `record` (a whole record or a summary: only the summary's fields are read). */
  add(record: Summarised): void {
    const index = this.keys.length;
    if (index === this.#due.length) this.#grow(index * 2);
    this.keys.push(record.key);
    this.#due[index] = record.nextAttemptAt;
    this.#created[index] = record.createdAt;
    this.#seq[index] = record.seq ?? Number.NaN;
    let state = this.#stateNames.indexOf(record.state);
    if (state < 0) state = this.#stateNames.push(record.state) - 1;
    this.#state[index] = state;
    if (record.scope === undefined && record.lease === undefined && record.retainUntil === undefined) return;
    const extras: Extras = {};
    if (record.scope !== undefined) extras.scope = record.scope;
    if (record.lease !== undefined) extras.lease = { owner: record.lease.owner, until: record.lease.until };
    if (record.retainUntil !== undefined) extras.retainUntil = record.retainUntil;
    this.#extras.set(index, extras);
  }

  /** Summary `index`, as a `RecordSummary` (made on each call). */
  at(index: number): RecordSummary | undefined {
    const key = this.keys.at(index);
    if (key === undefined) return undefined;
    const summary: RecordSummary = {
      key,
      state: this.#stateNames[this.#state[index] as number] as OperationState,
      nextAttemptAt: this.#due[index] as number,
      createdAt: this.#created[index] as number,
    };
    const extras = this.#extras.get(index);
    if (extras?.scope !== undefined) summary.scope = extras.scope;
    const seq = this.#seq[index] as number;
    if (!Number.isNaN(seq)) summary.seq = seq;
    if (extras?.lease !== undefined) summary.lease = { ...extras.lease };
    if (extras?.retainUntil !== undefined) summary.retainUntil = extras.retainUntil;
    return summary;
  }

  /** Scope of summary `index`, without making the summary. */
  scopeAt(index: number): string | undefined {
    return this.#extras.get(index)?.scope;
  }

  /** Whether summary `index` has a lease, a scope or a retention time (else only key, state and times). */
  hasExtras(index: number): boolean {
    return this.#extras.has(index);
  }

  /** Creation order of summary `index` (`writeOrder` of its `seq` and `createdAt`). */
  writeOrderAt(index: number, writeOrder: WriteOrder): number {
    const seq = this.#seq[index] as number;
    const createdAt = this.#created[index] as number;
    return writeOrder(Number.isNaN(seq) ? { createdAt } : { seq, createdAt });
  }

  /**
   * Indexes in the order `listSummaries` returns: earliest `nextAttemptAt`
   * first, then oldest, then by key (so the order does not depend on the
   * order a directory lists its entries in).
   */
  earliestFirst(writeOrder: WriteOrder): Uint32Array {
    const order = new Uint32Array(this.length);
    const created = new Float64Array(this.length);
    for (let i = 0; i < order.length; i++) {
      order[i] = i;
      created[i] = this.writeOrderAt(i, writeOrder);
    }
    const due = this.#due;
    return order.sort(
      (a, b) =>
        (due[a] as number) - (due[b] as number) ||
        (created[a] as number) - (created[b] as number) ||
        this.keys.compare(a, b),
    );
  }

  #grow(length: number): void {
    const grow = <T extends Float64Array | Uint8Array>(array: T): T => {
      const next = new (array.constructor as new (length: number) => T)(length);
      next.set(array);
      return next;
    };
    this.#due = grow(this.#due);
    this.#created = grow(this.#created);
    this.#seq = grow(this.#seq);
    this.#state = grow(this.#state);
  }
}
