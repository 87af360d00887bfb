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

  /**
   * The list of `items`, in their order. An array is measured first and
   * packed into buffers of exactly its size: grown by doubling, a 100k-key
   * list would leave ~2× its size in discarded buffers (external memory, freed
   * only when the GC gets to them) at the moment the pass starts.
   */
  static from(items: Iterable<Pick<ToDrive, 'key'> & { scope?: string | undefined }>): DriveList {
    const list = Array.isArray(items) ? DriveList.#sized(items) : new DriveList();
    for (const item of items) list.push(item.key, item.scope);
    return list;
  }

  static #sized(items: readonly Pick<ToDrive, 'key'>[]): DriveList {
    let bytes = 0;
    for (const item of items) bytes += utf8Length(item.key);
    const list = new DriveList();
    list.#bytes = new Uint8Array(Math.max(1, bytes));
    list.#ends = new Uint32Array(Math.max(1, items.length));
    return list;
  }

  get length(): number {
    return this.#length;
  }

  push(key: string, scope: string | undefined): void {
    this.#reserve(utf8Length(key));
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

/** Bytes of `text` in UTF-8 (what `encodeInto` writes), without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A surrogate pair is one code point: 4 bytes. A lone surrogate becomes U+FFFD: 3.
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

function grown<T extends Uint8Array | Uint32Array>(array: T, length: number): T {
  const next = new (array.constructor as new (length: number) => T)(length);
  next.set(array);
  return next;
}
