/**
 * The operations a resume pass is going to drive, in order, packed: every
 * key's UTF-8 bytes in one growing buffer with an end offset each, and the
 * few scopes aside.
 *
 * Why packed: as 100,000 strings and small objects the list is ~12 MB of
 * JS heap for the whole pass, and V8 lets the old generation grow to a few
 * times what is live before collecting it, so that list alone raised the
 * peak RSS of a 100k drain by tens of MB. Packed, it is ~4 MB of typed
 * arrays outside the JS heap; each key becomes a string again only when
 * its turn comes.
 */

/** One operation to drive: its key, and its scope for the scope queue. */
export interface ToDrive {
  key: string;
  scope: string | undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class DriveList {
  #bytes = new Uint8Array(4_096);
  #used = 0;
  #ends = new Uint32Array(256);
  #length = 0;
  /** Index → scope, only for operations that have one. */
  readonly #scopes = new Map<number, string>();

  /** The list of `items`, in their order. */
  static from(items: Iterable<Pick<ToDrive, 'key'> & { scope?: string | undefined }>): DriveList {
    const list = new DriveList();
    for (const item of items) list.push(item.key, item.scope);
    return list;
  }

  get length(): number {
    return this.#length;
  }

  push(key: string, scope: string | undefined): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    this.#reserve(key.length * 3);
    this.#used += encoder.encodeInto(key, this.#bytes.subarray(this.#used)).written;
    if (this.#length === this.#ends.length) this.#ends = grown(this.#ends, this.#ends.length * 2);
    this.#ends[this.#length] = this.#used;
    if (scope !== undefined) this.#scopes.set(this.#length, scope);
    this.#length++;
  }

  at(index: number): ToDrive | undefined {
    if (index < 0 || index >= this.#length) return undefined;
    const start = index === 0 ? 0 : (this.#ends[index - 1] as number);
    const key = decoder.decode(this.#bytes.subarray(start, this.#ends[index]));
    return { key, scope: this.#scopes.get(index) };
  }

  *[Symbol.iterator](): Iterator<ToDrive> {
    for (let i = 0; i < this.#length; i++) yield this.at(i) as ToDrive;
  }

  #reserve(bytes: number): void {
    if (this.#used + bytes <= this.#bytes.length) return;
    this.#bytes = grown(this.#bytes, Math.max(this.#bytes.length * 2, this.#used + bytes));
  }
}

function grown<T extends Uint8Array | Uint32Array>(array: T, length: number): T {
  const next = new (array.constructor as new (length: number) => T)(length);
  next.set(array);
  return next;
}
