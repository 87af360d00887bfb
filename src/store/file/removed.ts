/**
 * Deleted records, kept aside until no journal line can bring them back.
 *
 * Why: a deletion is made durable by its removal line in the deleter's
 * journal, and a checkpoint deletes that segment once the removal is on
 * disk. Another writer's segment may still hold an older line of the same
 * record (its checkpoint has not run, or failed): after a power cut, replay
 * would find the record file missing and restore that line, bringing back
 * an operation that was discarded or swept, which resuming would then send.
 * So `delete` moves the record file to `removed/<revision>-<name>` instead
 * of unlinking it; replay never restores a line below the revision of a
 * removal kept here (recovery.ts); and an entry is removed for good only
 * once every journal segment alive was started after it was made (plus a
 * margin for lines still queued in memory), when no line older than the
 * deletion is left anywhere.
 *
 * An entry's time is its file's modification time, set when it is moved
 * here; segments' start times are their files' birth times. Both are the
 * file system's clock. A file system that reports no birth time keeps
 * entries until no segment is left at all.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { DirSync, makeDirectory } from './durable.js';
import { isErrno, renameFile } from './io.js';
import { SEGMENT_SUFFIX } from './segments.js';

/** The directory, inside the store's, of deleted records. */
export const REMOVED_DIR = 'removed';

/**
 * How much longer than the segments alive at its deletion an entry is kept:
 * a relaxed line queued before the deletion may still reach a segment
 * started just after it (it is flushed within ~100 ms, unless the disk
 * stalls).
 */
const REMOVED_MARGIN_MS = 60_000;

export interface RemovedOptions {
  /** Tests set 0. @default 60_000 */
  marginMs?: number;
}

export class RemovedRecords {
  readonly #recordsDir: string;
  readonly #journalDir: string;
  readonly #marginMs: number;
  readonly #dir: DirSync;

  constructor(recordsDir: string, journalDir: string, options: RemovedOptions = {}) {
    this.#recordsDir = recordsDir;
    this.#journalDir = journalDir;
    this.#marginMs = options.marginMs ?? REMOVED_MARGIN_MS;
    this.#dir = new DirSync(join(recordsDir, REMOVED_DIR));
  }

  /**
   * Moves record file `name` here as removed at revision `rev` (the
   * revision of its removal line, already durable in the journal). Made
   * durable by the checkpoint of that line's segment (`sync`). False when
   * the record file was gone.
   */
  async moveAside(name: string, rev: number): Promise<boolean> {
    const target = join(this.#dir.path, `${rev}-${name}`);
    try {
      await renameFile(join(this.#recordsDir, name), target);
    } catch (error) {
      if (isErrno(error, 'ENOENT') && !fs.existsSync(this.#dir.path)) {
        // Created on the first deletion, so a store that never deletes (or is opened read-only) has none.
        makeDirectory(this.#dir.path);
        return this.moveAside(name, rev);
      }
      if (isErrno(error, 'ENOENT')) return false;
      throw error;
    }
    const nowS = Date.now() / 1000;
    // The entry's time is its deletion: pruning compares it with when segments were started.
    fs.utimesSync(target, nowS, nowS);
    return true;
  }

  /** Makes the moves into this directory durable (a checkpoint, before its segment goes). */
  async sync(): Promise<void> {
    if (fs.existsSync(this.#dir.path)) await this.#dir.sync();
  }

  /** The highest revision each record name was removed at, of the entries kept (read by recovery). */
  revisions(): Map<string, number> {
    const revisions = new Map<string, number>();
    for (const entry of this.#entries()) {
      const seen = revisions.get(entry.name);
      if (seen === undefined || entry.rev > seen) revisions.set(entry.name, entry.rev);
    }
    return revisions;
  }

  /** Removes for good the entries no journal segment alive could bring back. */
  prune(): void {
    const entries = this.#entries();
    if (entries.length === 0) return;
    const until = Math.min(this.#oldestSegmentStartMs(), Date.now()) - this.#marginMs;
    for (const entry of entries) {
      const path = join(this.#dir.path, entry.file);
      try {
        if (fs.statSync(path).mtimeMs < until) fs.unlinkSync(path);
      } catch (error) {
        if (!isErrno(error, 'ENOENT')) throw error;
      }
    }
  }

  async close(): Promise<void> {
    await this.#dir.close();
  }

  #entries(): { file: string; name: string; rev: number }[] {
    let files: string[];
    try {
      files = fs.readdirSync(this.#dir.path);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return [];
      throw error;
    }
    const entries: { file: string; name: string; rev: number }[] = [];
    for (const file of files) {
      const match = /^(\d+)-(.+)$/.exec(file);
      if (match !== null) entries.push({ file, name: match[2] as string, rev: Number(match[1]) });
    }
    return entries;
  }

  /** When the oldest journal segment in the directory was started (its birth time; 0 when unknown). */
  #oldestSegmentStartMs(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const name of fs.readdirSync(this.#journalDir)) {
      if (!name.endsWith(SEGMENT_SUFFIX)) continue;
      try {
        const bornMs = fs.statSync(join(this.#journalDir, name)).birthtimeMs;
        oldest = Math.min(oldest, Number.isFinite(bornMs) && bornMs > 0 ? bornMs : 0);
      } catch (error) {
        if (!isErrno(error, 'ENOENT')) throw error;
      }
    }
    return oldest;
  }
}
