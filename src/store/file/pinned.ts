/**
 * The record files this handle wrote last, kept open so that reading one
 * back costs one `stat` instead of open + fstat + read + close.
 *
 * An operation writes its record three times within milliseconds, and each
 * write reads the record twice (once to compute the change without the
 * claim, once under it: records.ts). The file a commit renames into place is
 * the claim file this handle just wrote (claim.ts), so its text is known.
 * Keeping its descriptor open pins its inode: the inode number cannot be
 * given to another file while it is open, and the store never writes into a
 * record file after renaming it into place (every version is a new file). So
 * when the path still names that inode, the file still holds that text. Size
 * and times are compared too, so even a file rewritten in place by hand
 * (which the store never does) is read again.
 *
 * At most `MAX_PINNED` descriptors per handle, least recently used dropped
 * first; `close()` drops them all. Not on Windows, where an open file gets
 * in the way of renaming over it.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { FileRead } from './io.js';

/** Descriptors kept open per store handle: enough for every write in flight at 32 concurrent operations. */
const MAX_PINNED = 64;
const CAN_PIN = process.platform !== 'win32';

interface Pin {
  fd: number;
  text: string;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export class PinnedRecords {
  readonly #dir: string;
  /** In least recently used order (a Map iterates in insertion order). */
  readonly #pins = new Map<string, Pin>();
  /** Reads answered from a pin (for tests and benchmarks). */
  hits = 0;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * Keeps `fd`, the file just renamed to record `name` with content `text`.
   * Takes ownership of `fd` in every case (closes it when it cannot keep it).
   */
  pin(name: string, fd: number, text: string): void {
    if (!CAN_PIN) {
      closeQuietly(fd);
      return;
    }
    let stat: fs.Stats;
    try {
      stat = fs.fstatSync(fd);
    } catch {
      closeQuietly(fd);
      return;
    }
    this.drop(name);
    this.#pins.set(name, { fd, text, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs });
    if (this.#pins.size > MAX_PINNED) {
      const oldest = this.#pins.keys().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
  }

  /**
   * What is at record `name`, when it is still the file pinned for it (a
   * `text` read), or when nothing is there; undefined when it must be read.
   */
  read(name: string): FileRead | undefined {
    const pin = this.#pins.get(name);
    if (pin === undefined) return undefined;
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(join(this.#dir, name), { throwIfNoEntry: false });
    } catch {
      stat = undefined;
    }
    if (stat === undefined) {
      this.drop(name);
      return { kind: 'missing' };
    }
    if (
      stat.ino !== pin.ino ||
      stat.size !== pin.size ||
      stat.mtimeMs !== pin.mtimeMs ||
      stat.ctimeMs !== pin.ctimeMs ||
      !stat.isFile()
    ) {
      this.drop(name);
      return undefined;
    }
    // Most recently used last.
    this.#pins.delete(name);
    this.#pins.set(name, pin);
    this.hits++;
    return { kind: 'text', text: pin.text, ino: pin.ino, size: pin.size, mtimeMs: pin.mtimeMs };
  }

  /** Forgets the pin of `name` (closing its descriptor), if any. */
  drop(name: string): void {
    const pin = this.#pins.get(name);
    if (pin === undefined) return;
    this.#pins.delete(name);
    closeQuietly(pin.fd);
  }

  /** Closes every pinned descriptor. */
  close(): void {
    for (const name of [...this.#pins.keys()]) this.drop(name);
  }

  /** Descriptors held (for tests). */
  get size(): number {
    return this.#pins.size;
  }
}

/**
 * Closes on the thread pool, never on the main thread: a pinned file has
 * usually been replaced by a newer version since, so this is the last
 * reference to an unlinked inode, and closing it frees the inode and its
 * blocks there and then (a file-system journal transaction on ext4). In a
 * profile at 32 operations in flight, a synchronous close here was a tenth
 * of the process's CPU time.
 */
function closeQuietly(fd: number): void {
  fs.close(fd, () => {
    // Already closed, or failed: nothing more to release.
  });
}
