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

/** Record fsyncs a checkpoint issues at once: leaves thread-pool room for the writes in progress. */
const CHECKPOINT_PARALLEL = 1;

/**
 * Makes every record file in `names` durable where it is now (fsync of each
 * file that still exists, then of the directory, which also makes renames
 * and removals durable), then deletes the segment at `path`. Also used by
 * recovery on the segments of crashed writers.
 *
 * `names` is drained as the files are synced: under sustained writes the
 * checkpoints of several segments can run at once, tens of thousands of
 * names each, and a name let go once its file is synced (rather than a copy
 * of the whole list held to the end) keeps that backlog's memory shrinking
 * while it is worked off. A failed checkpoint loses nothing by it: the
 * segment stays on disk and recovery checkpoints it from its own lines.
 */
export async function checkpoint(path: string, names: Set<string>, records: DirSync, fd?: number): Promise<void> {
  if (fd !== undefined) await closeFile(fd).catch(() => undefined);
  const next = names.values();
  const worker = async (): Promise<void> => {
    for (let item = next.next(); item.done !== true; item = next.next()) {
      // Deleting the entry just returned does not disturb a Set's iteration.
      names.delete(item.value);
      await syncFileAt(join(records.path, item.value));
    }
  };
  await Promise.all(Array.from({ length: CHECKPOINT_PARALLEL }, worker));
  await records.sync();
  await unlinkFile(path).catch((error: unknown) => {
    if (!isErrno(error, 'ENOENT')) throw error;
  });
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
