/**
 * The record files this handle wrote last, kept open so that reading one
 * back costs one `stat` instead of open + fstat + read + close.
 *
 * An operation writes its record three times within milliseconds, and each
 * write reads the record twice (once to compute the change without the
 * claim, from `peek`, once under it: records.ts). The file a commit renames into place is
 * the claim file this handle just wrote (claim.ts), so its text is known.
 * Keeping its descriptor open pins its inode: the inode number cannot be
 * given to another file while it is open, and the store never writes into a
 * record file after renaming it into place (every version is a new file). So
 * when the path still names that inode, the file still holds that text. Size
 * and mtime are compared too, so even a file rewritten in place by hand
 * (which the store never does) is read again. Nothing else is spent on it:
 * the pin's inode, size and mtime come from the `stat` by which the claim
 * checked it still owned the file before the rename (claim.ts), and the
 * revision of its text from the commit that wrote it.
 *
 * At most `MAX_PINNED` descriptors per handle, least recently used dropped
 * first; `close()` drops them all. Not on Windows, where an open file gets
 * in the way of renaming over it.
 */
import * as fs from 'node:fs';
import { entryPrefix, type FileRead } from './io.js';

/**
 * Descriptors kept open per store handle: enough for every operation of a
 * large release at once (a queue of 200 whose host came back after an
 * outage writes them all within a second; with 64, most of those writes read
 * their record from disk twice). Node raises the descriptor limit to the
 * hard limit at start-up.
 */
const MAX_PINNED = 256;
const CAN_PIN = process.platform !== 'win32';

interface Pin {
  fd: number;
  text: string;
  /** The revision in `text`'s writer line (what the next version's revision builds on). */
  rev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** What a pin compares with the path's `stat` on every read. */
type FileStat = Pick<fs.Stats, 'ino' | 'size' | 'mtimeMs'>;

export class PinnedRecords {
  /** The record directory as a prefix of its entries' paths (io.ts `entryPrefix`). */
  readonly #prefix: string;
  /** In least recently used order (a Map iterates in insertion order). */
  readonly #pins = new Map<string, Pin>();
  /** Reads answered from a pin (for tests and benchmarks). */
  hits = 0;

  constructor(dir: string) {
    this.#prefix = entryPrefix(dir);
  }

  /**
   * Keeps `fd`, the file just renamed to record `name` with content `text`
   * at revision `rev`, as `stat` (taken just before the rename, which
   * changes none of these) saw it. Takes ownership of `fd` in every case
   * (closes it when it cannot keep it).
   */
  pin(name: string, fd: number, text: string, rev: number, stat: FileStat): void {
    if (!CAN_PIN) {
      closeQuietly(fd);
      return;
    }
    this.drop(name);
    this.#pins.set(name, { fd, text, rev, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs });
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
      stat = fs.statSync(this.#prefix + name, { throwIfNoEntry: false });
    } catch {
      stat = undefined;
    }
    if (stat === undefined) {
      this.drop(name);
      return { kind: 'missing' };
    }
    if (stat.ino !== pin.ino || stat.size !== pin.size || stat.mtimeMs !== pin.mtimeMs || !stat.isFile()) {
      this.drop(name);
      return undefined;
    }
    // Most recently used last.
    this.#pins.delete(name);
    this.#pins.set(name, pin);
    this.hits++;
    return { kind: 'text', text: pin.text, ino: pin.ino, size: pin.size, mtimeMs: pin.mtimeMs };
  }

  /**
   * The text pinned for `name`, without checking that the path still names
   * its file: for a guess that is checked later (records.ts, `readAhead`).
   */
  peek(name: string): string | undefined {
    return this.#pins.get(name)?.text;
  }

  /** The revision of `text`, when it is the text pinned for `name` (no need to parse its writer line). */
  revOf(name: string, text: string): number | undefined {
    const pin = this.#pins.get(name);
    return pin !== undefined && pin.text === text ? pin.rev : undefined;
  }

  /** Forgets the pin of `name` (closing its descriptor), if any. */
  drop(name: string): void {
    const pin = this.#pins.get(name);
    if (pin === undefined) return;
    this.#pins.delete(name);
    closeQuietly(pin.fd);
  }

  /**
   * Forgets the pin of `name` just before its file is replaced or removed,
   * closing its descriptor at once. The caller holds the record's claim and
   * has just read the record through this pin (`read` checked that the path
   * still names the pinned file), so the file is still linked: closing it
   * frees nothing and does not wait for the disk, unlike the close of a file
   * already replaced (`closeQuietly`), and it saves a thread-pool round trip
   * per write.
   */
  release(name: string): void {
    const pin = this.#pins.get(name);
    if (pin === undefined) return;
    this.#pins.delete(name);
    try {
      fs.closeSync(pin.fd);
    } catch {
      // Already closed: nothing to release.
    }
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
