/**
 * Checkpointing a journal segment: the record files it names are made
 * durable where they are now, then the segment is deleted. The journal does
 * it in the background for its own old segments; recovery does it for the
 * segments of crashed writers.
 *
 * An fsync that fails is not tried again on the same file. After a
 * write-back error, Linux may leave the file's pages marked clean with the
 * data never written: the next fsync succeeds without writing anything, and
 * deleting the segment on that success would throw away the only durable
 * copy. So a record whose fsync fails is written again (`resync`: its
 * current version into a new file, fsynced, renamed into place). If that
 * fails too, the segment is kept and renamed `….resync.log`: whoever
 * checkpoints it later (recovery, once its writer is gone) replays it and
 * writes every record it names again instead of trusting an fsync.
 */
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DirSync } from './durable.js';
import { closeFile, fsyncFile, isErrno, openForReading, renameFile, unlinkFile } from './io.js';
import type { RemovedRecords } from './removed.js';
import { forEachSegmentName, RESYNC_SUFFIX, SEGMENT_SUFFIX } from './segment-names.js';

/**
 * How many of the names last synced a checkpoint remembers, to skip a
 * repeat. A record's lines in one segment are usually close together (an
 * operation writes its record a few times within moments), so a short
 * memory catches nearly every repeat; one it misses costs a second fsync of
 * a file already clean, never a missed one.
 */
const RECENT_NAMES = 4096;

export interface CheckpointOptions {
  /** The segment's open descriptor (the journal's own segment): closed first. */
  fd?: number;
  /**
   * Records whose lines may be missing from the segment: a flush into it
   * failed after their relaxed writes had renamed their files into place.
   * Synced like the names the segment holds.
   */
  unwritten?: Iterable<string> | undefined;
  /**
   * Where the segment's removals moved their records (removed.ts): made
   * durable before the segment goes, and pruned after.
   */
  removed?: RemovedRecords | undefined;
  /** Prune `removed` afterwards. Recovery does it itself, once it no longer holds its claim. @default true */
  prune?: boolean;
  /**
   * Writes record `name`'s current version again, durably, into a new file
   * (records.ts `resync`): for a record whose fsync failed. Without it, such
   * a failure fails the checkpoint.
   */
  resync?: ((name: string) => Promise<void>) | undefined;
  /**
   * Write every record the segment names again (`resync`) instead of
   * fsyncing it: the segment was marked by a checkpoint whose fsync failed
   * (see the top of this file).
   */
  resyncAll?: boolean;
}

/** Whether the segment at `path` was marked by a failed checkpoint (see the top of this file). */
export function needsResync(path: string): boolean {
  return path.endsWith(RESYNC_SUFFIX);
}

/**
 * Makes every record file the segment at `path` has lines for durable where
 * it is now (an fsync of each file that still exists, then of the
 * directory, which also makes renames and removals durable, and of the
 * directory of removed records), then deletes the segment. The names are
 * read back from the segment itself (segment-names.ts), so a checkpoint
 * waiting for its turn holds nothing in memory. A record whose fsync fails
 * is written again (`resync`); when that, or a directory fsync, fails, the
 * segment is marked (`RESYNC_SUFFIX`) and kept (see the top of this file).
 * Also used by recovery on the segments of crashed writers.
 */
export async function checkpoint(path: string, records: DirSync, options: CheckpointOptions = {}): Promise<void> {
  if (options.fd !== undefined) await closeFile(options.fd).catch(() => undefined);
  const { resync, resyncAll = false } = options;
  // Fsyncing in place is exactly what a marked segment must not be settled by.
  if (resyncAll && resync === undefined) throw new Error(`checkpoint of ${path}: resyncAll needs resync`);
  // An fsync failed, and writing the record again did not help: the segment is marked before the error goes on.
  const failedSync = async (error: unknown): Promise<never> => {
    const kept = await markForResync(path);
    const what = kept === undefined ? 'the segment could not be marked' : `the segment is kept as ${basename(kept)}`;
    throw new Error(`${String(error)}; ${what}, and its records are written again once its writer is gone`, {
      cause: error,
    });
  };
  const recent = new Set<string>();
  // One file at a time: leaves the thread pool to the writes in progress.
  const sync = async (name: string): Promise<void> => {
    if (recent.has(name)) return;
    recent.add(name);
    if (recent.size > RECENT_NAMES) recent.delete(recent.values().next().value as string);
    if (resyncAll && resync !== undefined) return resync(name).catch(failedSync);
    // Through a descriptor opened now: Linux reports a write-back error to the first fsync after it,
    // so if another process's fsync saw it first, this one succeeds (see docs/stores.md, file store durability).
    try {
      await syncFileAt(join(records.path, name));
    } catch (error) {
      if (!(error instanceof FsyncError)) throw error;
      if (resync === undefined) return failedSync(error);
      await resync(name).catch(failedSync);
    }
  };
  for (const name of options.unwritten ?? []) await sync(name);
  await forEachSegmentName(path, sync);
  await records.sync().catch(failedSync);
  await options.removed?.sync().catch(failedSync);
  await unlinkFile(path).catch((error: unknown) => {
    if (!isErrno(error, 'ENOENT')) throw error;
  });
  if (options.prune === false) return;
  try {
    await options.removed?.prune();
  } catch (error) {
    // Entries left are only kept longer: the next checkpoint prunes them.
    process.emitWarning(`oncely: pruning removed records failed: ${String(error)}`);
  }
}

/** An fsync of a record file failed: its data may never reach the disk, whatever a later fsync says. */
class FsyncError extends Error {
  constructor(path: string, cause: unknown) {
    super(`fsync of ${path} failed: ${String(cause)}`, { cause });
    this.name = 'FsyncError';
  }
}

async function syncFileAt(path: string): Promise<void> {
  let fd: number;
  try {
    // Without blocking: something else (a FIFO) may sit where the record was; it is not ours to sync.
    fd = await openForReading(path);
  } catch (error) {
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENXIO')) return; // removed since: the directory fsync covers that
    throw error;
  }
  try {
    if (fs.fstatSync(fd).isFile()) await fsyncFile(fd);
  } catch (error) {
    await closeFile(fd).catch(() => undefined);
    throw new FsyncError(path, error);
  }
  // A close can report a write-back error too (NFS): the same as a failed fsync.
  await closeFile(fd).catch((error: unknown) => Promise.reject(new FsyncError(path, error)));
}

/**
 * Renames the segment at `path` to its `RESYNC_SUFFIX` name (made durable),
 * unless it has it already; resolves with the name it has then. Best
 * effort: when the rename fails, undefined, and the segment stays under its
 * name (then a later checkpoint trusts its fsyncs: a limit docs/stores.md states).
 */
async function markForResync(path: string): Promise<string | undefined> {
  if (needsResync(path)) return path;
  if (!path.endsWith(SEGMENT_SUFFIX)) return undefined;
  const marked = path.slice(0, -SEGMENT_SUFFIX.length) + RESYNC_SUFFIX;
  const journalDir = new DirSync(dirname(marked));
  try {
    await renameFile(path, marked);
  } catch {
    return undefined;
  }
  try {
    await journalDir.sync();
  } catch {
    // Renamed, but the rename may not survive a power cut (which replays the segment anyway).
  } finally {
    await journalDir.close().catch(() => undefined);
  }
  return marked;
}
