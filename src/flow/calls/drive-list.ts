/**
 * The operations a resume pass is going to drive, in order, packed: every
 * key's UTF-8 bytes in one buffer with an end offset each
 * (store/packed-strings.ts), and the few scopes aside.
 *
 * Why packed: as 100,000 strings and small objects the list is ~12 MB of
 * JS heap for the whole pass, and V8 lets the old generation grow to a few
 * times what is live before collecting it, so that list alone raised the
 * peak RSS of a 100k drain by tens of MB. Packed, it is ~4 MB of typed
 * arrays outside the JS heap; each key becomes a string again only when
 * its turn comes.
 */
import { PackedStrings, utf8Length } from '../../store/packed-strings.js';
import type { PackedSummaries } from '../../store/packed-summaries.js';

export { utf8Length };

/** One operation to drive: its key, and its scope for the scope queue. */
export interface ToDrive {
  key: string;
  scope: string | undefined;
}

export class DriveList {
  #keys: PackedStrings;
  /** Index → scope, only for operations that have one. */
  readonly #scopes = new Map<number, string>();

  constructor(keys = new PackedStrings()) {
    this.#keys = keys;
  }

  /**
   * The list of `items`, in their order. An array is measured first and
   * packed into buffers of exactly its size: grown by doubling, a 100k-key
   * list would leave ~2× its size in discarded buffers (external memory, freed
   * only when the GC gets to them) at the moment the pass starts.
   */
  static from(items: Iterable<Pick<ToDrive, 'key'> & { scope?: string | undefined }>): DriveList {
    let list = new DriveList();
    if (Array.isArray(items)) {
      let bytes = 0;
      for (const item of items as readonly Pick<ToDrive, 'key'>[]) bytes += utf8Length(item.key);
      list = new DriveList(new PackedStrings(items.length, bytes));
    }
    for (const item of items) list.push(item.key, item.scope);
    return list;
  }

  /** Summaries `order` of `listed` (indexes), in that order, keys copied as bytes into buffers of exactly their size. */
  static fromPacked(listed: PackedSummaries, order: ArrayLike<number>): DriveList {
    let bytes = 0;
    for (let k = 0; k < order.length; k++) bytes += listed.keys.byteLengthOf(order[k] as number);
    const list = new DriveList(new PackedStrings(order.length, bytes));
    for (let k = 0; k < order.length; k++) {
      const index = order[k] as number;
      const scope = listed.scopeAt(index);
      if (scope !== undefined) list.#scopes.set(k, scope);
      list.#keys.pushFrom(listed.keys, index);
    }
    return list;
  }

  get length(): number {
    return this.#keys.length;
  }

  push(key: string, scope: string | undefined): void {
    if (scope !== undefined) this.#scopes.set(this.#keys.length, scope);
    this.#keys.push(key);
  }

  at(index: number): ToDrive | undefined {
    const key = this.#keys.at(index);
    return key === undefined ? undefined : { key, scope: this.#scopes.get(index) };
  }

  *[Symbol.iterator](): Iterator<ToDrive> {
    for (let i = 0; i < this.length; i++) yield this.at(i) as ToDrive;
  }
}
