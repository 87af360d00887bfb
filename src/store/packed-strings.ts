/**
 * Many short strings (keys, file names) packed as UTF-8 in one buffer, with
 * the end offset of each in another: two typed arrays outside the JS heap
 * instead of one heap string (and an array slot) each.
 *
 * Why: a pass over 100,000 records (a file store's listing, a resume pass)
 * that holds a string per record holds ~7 MB of JS heap while it runs, and
 * V8 lets the old generation grow to about four times what was live at its
 * last full collection before it collects again. What a pass holds on the
 * heap while a collection runs therefore comes back about four times over
 * in the process's peak RSS; packed, it is a few MB of buffers freed with
 * the pass. Each string becomes a heap string again only while it is used.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class PackedStrings {
  #bytes: Uint8Array;
  #used = 0;
  #ends: Uint32Array;
  #length = 0;

  /** Room for `count` strings of `bytes` UTF-8 bytes in all (it grows past them when needed). */
  constructor(count = 256, bytes = 4_096) {
    this.#bytes = new Uint8Array(Math.max(1, bytes));
    this.#ends = new Uint32Array(Math.max(1, count));
  }

  /**
   * `strings`, packed into buffers of exactly their size (grown by
   * doubling, 100k strings would leave ~2× their size in discarded buffers,
   * external memory freed only when the GC gets to them).
   */
  static of(strings: readonly string[]): PackedStrings {
    let bytes = 0;
    for (const s of strings) bytes += utf8Length(s);
    const packed = new PackedStrings(strings.length, bytes);
    for (const s of strings) packed.push(s);
    return packed;
  }

  get length(): number {
    return this.#length;
  }

  /** UTF-8 bytes of all the strings. */
  get byteLength(): number {
    return this.#used;
  }

  push(text: string): void {
    const bytes = utf8Length(text);
    if (this.#used + bytes > this.#bytes.length) {
      this.#bytes = grown(this.#bytes, Math.max(this.#bytes.length * 2, this.#used + bytes));
    }
    this.#used += encoder.encodeInto(text, this.#bytes.subarray(this.#used)).written;
    if (this.#length === this.#ends.length) this.#ends = grown(this.#ends, this.#ends.length * 2);
    this.#ends[this.#length++] = this.#used;
  }

  /** Appends string `index` of `from` (its bytes, copied: no string made). */
  pushFrom(from: PackedStrings, index: number): void {
    const bytes = from.#bytesOf(index);
    if (this.#used + bytes.length > this.#bytes.length) {
      this.#bytes = grown(this.#bytes, Math.max(this.#bytes.length * 2, this.#used + bytes.length));
    }
    this.#bytes.set(bytes, this.#used);
    this.#used += bytes.length;
    if (this.#length === this.#ends.length) this.#ends = grown(this.#ends, this.#ends.length * 2);
    this.#ends[this.#length++] = this.#used;
  }

  /** String `index` (undefined out of range). */
  at(index: number): string | undefined {
    if (index < 0 || index >= this.#length) return undefined;
    return decoder.decode(this.#bytesOf(index));
  }

  /** UTF-8 bytes of string `index`. */
  byteLengthOf(index: number): number {
    return (this.#ends[index] as number) - this.#startOf(index);
  }

  /**
   * Compares strings `i` and `j` as `<` compares JS strings (UTF-16 code
   * units). On the bytes while they are ASCII (every opaque key, every
   * file name the store writes); decoded only where non-ASCII bytes differ,
   * since UTF-8 byte order and UTF-16 order disagree there.
   */
  compare(i: number, j: number): number {
    // On offsets, not subarrays: a sort of 100k keys compares ~2M times.
    const bytes = this.#bytes;
    const a = this.#startOf(i);
    const b = this.#startOf(j);
    const aLength = (this.#ends[i] as number) - a;
    const bLength = (this.#ends[j] as number) - b;
    const common = Math.min(aLength, bLength);
    for (let k = 0; k < common; k++) {
      const x = bytes[a + k] as number;
      const y = bytes[b + k] as number;
      if (x === y) continue;
      if (x < 0x80 && y < 0x80) return x - y;
      const s = this.at(i) as string;
      const t = this.at(j) as string;
      return s < t ? -1 : s > t ? 1 : 0;
    }
    return aLength - bLength;
  }

  #startOf(index: number): number {
    return index === 0 ? 0 : (this.#ends[index - 1] as number);
  }

  #bytesOf(index: number): Uint8Array {
    return this.#bytes.subarray(this.#startOf(index), this.#ends[index]);
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
