/**
 * Creating a claim file (claim.ts): the exclusive create with its holder
 * line, and the few file checks a held claim makes of itself.
 */
import * as fs from 'node:fs';
import { writeSteps } from './durable.js';
import { isErrno, openFile, unlinkFile, writeTextSync } from './io.js';

/** Reports a step of a write to the crash tests' hook (durable.ts `writeSteps`). */
export function step(name: Parameters<NonNullable<typeof writeSteps.hook>>[0]): void {
  writeSteps.hook?.(name);
}

/** A claim file just created: its descriptor and inode. */
export interface Created {
  path: string;
  fd: number;
  ino: number;
}

/**
 * Creates the claim file at `path` (`O_EXCL`: undefined when someone else
 * holds the claim) and writes `holderLine` into it at once. Two directory
 * changes per write in all (this create, and the rename that commits): see
 * claim.md for why the claim is no longer created under a temp name and
 * linked into place, and what a kill between the create and the write
 * costs. Whatever fails on the way releases what was acquired so far: the
 * claim and its descriptor.
 *
 * The create runs on the thread pool: it changes the directory, and on ext4
 * that can wait behind a file-system journal commit for milliseconds.
 * Writing into the file we hold is synchronous (the holder line here, the
 * new version in `commit`): page cache only, cheaper than a thread-pool
 * round trip.
 */
export async function tryCreate(path: string, holderLine: string): Promise<Created | undefined> {
  let fd: number;
  try {
    fd = await openFile(path, 'wx', 0o600);
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return undefined;
    throw error;
  }
  let result: Created | undefined;
  try {
    step('claim-opened');
    writeTextSync(fd, holderLine, 0);
    const { ino } = fs.fstatSync(fd);
    step('claim-written');
    result = { path, fd, ino };
    return result;
  } finally {
    if (result === undefined) {
      // Ours, unless a sweep took it for a leftover meanwhile (then `statIfOwned` says no).
      const ino = inoOf(fd);
      closeQuietly(fd);
      if (ino !== undefined && statIfOwned(path, ino) !== undefined) await unlinkFile(path).catch(() => undefined);
    }
  }
}

function inoOf(fd: number): number | undefined {
  try {
    return fs.fstatSync(fd).ino;
  } catch {
    return undefined;
  }
}

/** What `stat` says of `path` when it is still the file with inode `ino`; else undefined. */
export function statIfOwned(path: string, ino: number): fs.Stats | undefined {
  try {
    const stat = fs.statSync(path);
    return stat.ino === ino ? stat : undefined;
  } catch {
    return undefined;
  }
}

export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed: nothing to release.
  }
}
