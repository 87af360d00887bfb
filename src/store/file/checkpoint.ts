/**
 * Checkpointing a journal segment: the record files it names are made
 * durable where they are now, then the segment is deleted. The journal does
 * it in the background for its own old segments; recovery does it for the
 * segments of crashed writers.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { DirSync } from './durable.js';
import { closeFile, fsyncFile, isErrno, openForReading, unlinkFile } from './io.js';
import type { RemovedRecords } from './removed.js';
import { forEachSegmentName } from './segment-names.js';

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
}

/**
 * Makes every record file the segment at `path` has lines for durable where
 * it is now (an fsync of each file that still exists, then of the
 * directory, which also makes renames and removals durable, and of the
 * directory of removed records), then deletes the segment. The names are
 * read back from the segment itself (segment-names.ts), so a checkpoint
 * waiting for its turn holds nothing in memory. Also used by recovery on the segments of crashed writers.
 */
export async function checkpoint(path: string, records: DirSync, options: CheckpointOptions = {}): Promise<void> {
  if (options.fd !== undefined) await closeFile(options.fd).catch(() => undefined);
  const recent = new Set<string>();
  // One file at a time: leaves the thread pool to the writes in progress.
  const sync = async (name: string): Promise<void> => {
    if (recent.has(name)) return;
    recent.add(name);
    if (recent.size > RECENT_NAMES) recent.delete(recent.values().next().value as string);
    await syncFileAt(join(records.path, name));
  };
  for (const name of options.unwritten ?? []) await sync(name);
  await forEachSegmentName(path, sync);
  await records.sync();
  await options.removed?.sync();
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
  } finally {
    await closeFile(fd);
  }
}
