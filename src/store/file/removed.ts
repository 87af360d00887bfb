/**
 * Deleted records, kept aside until no journal line can bring them back.
 *
 * Why: a deletion is made durable by its removal line in the deleter's
 * journal, and a checkpoint deletes that segment once the removal is on
 * disk. Another writer's segment may still hold an older line of the same
 * record (its checkpoint has not run, or failed): after a power cut, replay
 * would find the record file missing and restore that line, bringing back
 * an operation that was discarded or swept, which resuming would then send.
 * So `delete` moves the record file to `removed/<revision>-<at>-<name>`
 * instead of unlinking it; replay never restores a line below the revision
 * of a removal kept here (recovery.ts); and an entry is removed for good only
 * once every journal segment alive was started after it was made (plus a
 * margin for lines still queued in memory), when no line older than the
 * deletion is left anywhere.
 *
 * An entry's time (`<at>`, in its name) is the wall clock when it was
 * moved here; a segment's start time is in its name too (segments.ts), so
 * pruning reads no file and depends on no file system's birth times. A
 * segment whose name does not say (an older version's) keeps every entry
 * until it is gone.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { DirSync, makeDirectory } from './durable.js';
import { isErrno, renameFile, unlinkFile } from './io.js';
import type { Machine } from './machine.js';
import { parseSegmentName } from './segment-file.js';
import { SEGMENT_SUFFIX } from './segment-names.js';

/** The directory, inside the store's, of deleted records. */
export const REMOVED_DIR = 'removed';

/**
 * How much longer than the segments alive at its deletion an entry is kept:
 * a relaxed line queued before the deletion may still reach a segment
 * started just after it (it is flushed within ~100 ms, unless the disk
 * stalls).
 */
const REMOVED_MARGIN_MS = 60_000;

/** How many recent removals a handle remembers (`revisionOf`): a delete then a send of the same key is close. */
const REMEMBERED_REMOVALS = 4_096;

export interface RemovedOptions {
  /** Tests set 0. @default 60_000 */
  marginMs?: number;
  /** The clock of file times. */
  machine: Pick<Machine, 'fileClockNow'>;
}

export class RemovedRecords {
  readonly #recordsDir: string;
  readonly #journalDir: string;
  readonly #marginMs: number;
  readonly #dir: DirSync;
  /** The revisions this handle removed records at, for the last `REMEMBERED_REMOVALS` records. */
  readonly #removedRevs = new Map<string, number>();
  /**
   * No entry kept by the last look is older than this, and entries made
   * since are younger: until `now - margin` passes it, none can go.
   */
  #keptSinceMs = Number.NEGATIVE_INFINITY;
  #pruning: Promise<void> | undefined;
  readonly #fileClockNow: () => number;

  constructor(recordsDir: string, journalDir: string, options: RemovedOptions) {
    this.#recordsDir = recordsDir;
    this.#journalDir = journalDir;
    this.#marginMs = options.marginMs ?? REMOVED_MARGIN_MS;
    this.#fileClockNow = options.machine.fileClockNow;
    this.#dir = new DirSync(join(recordsDir, REMOVED_DIR));
  }

  /**
   * Moves record file `name` here as removed at revision `rev` (the
   * revision of its removal line, already durable in the journal). Made
   * durable by the checkpoint of that line's segment (`sync`). False when
   * the record file was gone.
   */
  async moveAside(name: string, rev: number): Promise<boolean> {
    this.#removedRevs.delete(name);
    this.#removedRevs.set(name, rev);
    if (this.#removedRevs.size > REMEMBERED_REMOVALS)
      this.#removedRevs.delete(this.#removedRevs.keys().next().value as string);
    try {
      await renameFile(join(this.#recordsDir, name), this.#entryPath(name, rev));
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return false;
      throw error;
    }
    return true;
  }

  /**
   * Records that `name` was removed at revision `rev` without moving a file
   * (an empty entry): recovery does it for the removals it replays, so that
   * they outlive the dead segments it then deletes. Durable after `sync`.
   */
  remember(name: string, rev: number): void {
    try {
      fs.writeFileSync(this.#entryPath(name, rev), '', { flag: 'wx' });
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
    }
  }

  /**
   * Where the entry for removing `name` at `rev` goes, now. Its time is the
   * wall clock, not the store's runtime: it is compared with the start times
   * in segment names. The directory is created on the first deletion, so a
   * store that never deletes (or is opened read-only) has none.
   */
  #entryPath(name: string, rev: number): string {
    if (!fs.existsSync(this.#dir.path)) makeDirectory(this.#dir.path);
    return join(this.#dir.path, `${rev}-${Math.floor(this.#fileClockNow())}-${name}`);
  }

  /**
   * The revision this handle last removed record `name` at, if it did
   * lately: a record written again starts above it (records.ts), so replay
   * never takes it for a version the deletion removed, even when it is
   * written within the same millisecond.
   */
  revisionOf(name: string): number | undefined {
    return this.#removedRevs.get(name);
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

  /**
   * Removes for good the entries no journal segment alive could bring back.
   * Looks at the directory only once the oldest entry the last look kept
   * may go (entries made since are younger): after a sweep that deleted
   * 100k records, a checkpoint does not list them all again every time.
   */
  prune(): Promise<void> {
    // One look at a time: checkpoints that end together (at close) share it.
    this.#pruning ??= this.#prune().finally(() => {
      this.#pruning = undefined;
    });
    return this.#pruning;
  }

  async #prune(): Promise<void> {
    const nowMs = this.#fileClockNow();
    if (nowMs - this.#marginMs <= this.#keptSinceMs) return;
    const entries = this.#entries();
    const untilMs = Math.min(this.#oldestSegmentStartMs(), nowMs) - this.#marginMs;
    // With nothing kept, the next look is a margin away (another process's deletions may arrive meanwhile).
    let keptSinceMs = nowMs;
    for (const entry of entries) {
      if (entry.atMs >= untilMs) {
        keptSinceMs = Math.min(keptSinceMs, entry.atMs);
        continue;
      }
      // One at a time, off the main thread: a big sweep's entries go without stalling the process.
      await unlinkFile(join(this.#dir.path, entry.file)).catch((error: unknown) => {
        if (!isErrno(error, 'ENOENT')) throw error;
      });
    }
    // Kept because of an old segment, not for their age: look again at the next checkpoint.
    this.#keptSinceMs = keptSinceMs < nowMs - this.#marginMs ? Number.NEGATIVE_INFINITY : keptSinceMs;
  }

  async close(): Promise<void> {
    await this.#dir.close();
  }

  #entries(): { file: string; name: string; rev: number; atMs: number }[] {
    let files: string[];
    try {
      files = fs.readdirSync(this.#dir.path);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return [];
      throw error;
    }
    const entries: { file: string; name: string; rev: number; atMs: number }[] = [];
    for (const file of files) {
      const match = /^(\d+)-(\d+)-(.+)$/.exec(file);
      if (match !== null)
        entries.push({ file, name: match[3] as string, rev: Number(match[1]), atMs: Number(match[2]) });
    }
    return entries;
  }

  /** When the oldest journal segment in the directory was started, by its name (0 for a name that does not say). */
  #oldestSegmentStartMs(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const name of fs.readdirSync(this.#journalDir)) {
      if (!name.endsWith(SEGMENT_SUFFIX)) continue;
      oldest = Math.min(oldest, parseSegmentName(name)?.startedAtMs ?? 0);
    }
    return oldest;
  }
}
