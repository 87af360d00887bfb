/**
 * Byte conversions on the guard's path. Where the runtime has Node's
 * `Buffer` (Node, Bun, Deno), a small one is carved from its shared pool:
 * a new `Uint8Array` gets an `ArrayBuffer` of its own, which the engine
 * allocates and later frees outside its heap, and that cost more on a
 * loaded server than the copy itself. Elsewhere, the standard ways.
 *
 * A pooled buffer is a window on a larger one: anything kept for long
 * (the memory store's records) keeps bytes of its own (`ownedBytes`).
 */

interface BufferClass {
  from(text: string, encoding: 'utf8'): Uint8Array;
  from(bytes: Uint8Array): Uint8Array;
  from(
    buffer: ArrayBufferLike,
    byteOffset: number,
    length: number,
  ): { toString(encoding: 'latin1'): string; write(text: string, encoding: 'latin1'): number };
}

const NodeBuffer = (globalThis as { Buffer?: BufferClass }).Buffer;
const encoder = new TextEncoder();

/** `text` as UTF-8 bytes. */
export function utf8Bytes(text: string): Uint8Array {
  return NodeBuffer === undefined ? encoder.encode(text) : NodeBuffer.from(text, 'utf8');
}

/** A copy of `bytes` (a caller may reuse its buffer once it handed it over). */
export function copyOf(bytes: Uint8Array): Uint8Array {
  // Not `bytes.slice()`: on a Node `Buffer`, `slice` is a window on the same memory, not a copy.
  return NodeBuffer === undefined ? Uint8Array.prototype.slice.call(bytes) : NodeBuffer.from(bytes);
}

/**
 * `bytes` themselves when they are a plain `Uint8Array` filling its buffer,
 * else a copy that is (a window keeps its whole buffer alive, and readers
 * of a stored body may take its `buffer` as the body).
 */
export function ownedBytes(bytes: Uint8Array): Uint8Array {
  const plain = bytes.constructor === Uint8Array && bytes.byteOffset === 0;
  return plain && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

/** The bytes as a string of one character per byte (each code unit below 256: a one-byte string). */
export function latin1String(bytes: Uint8Array): string {
  if (NodeBuffer !== undefined) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** The inverse of `latin1String`: a plain `Uint8Array` of its own (a replayed body, which readers may keep). */
export function latin1Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  if (NodeBuffer !== undefined) NodeBuffer.from(bytes.buffer, 0, bytes.length).write(text, 'latin1');
  else for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
