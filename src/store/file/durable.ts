/**
 * Directory fsyncs, group-committed, and the durable directory changes
 * built on them (removals and moves to quarantine).
 *
 * A directory fsync makes its entry changes (creates, renames, removals)
 * survive a power cut. Record writes do not wait for one: their journal line
 * is what makes them durable (journal.ts), and a checkpoint fsyncs the
 * directory once for a whole segment's worth of renames.
 *
 * Group commit: every change made while a directory fsync was running waits
 * for the next one, and that single fsync covers all of them. Nobody
 * resolves before an fsync that started after its own change.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fsyncFile, isErrno, renameFile, unlinkFile } from './io.js';

/**
 * The steps of one write, in order: taking the claim (its file created, its
 * holder line written: claim.md), then committing through it (`durable`: its
 * journal line flushed, or only queued for a relaxed write); and, in an
 * exclusive store, a record file written behind its journal (write-behind.ts).
 */
export type WriteStep = 'claim-opened' | 'claim-written' | 'temp-written' | 'durable' | 'renamed' | 'written-behind';

/**
 * Test seam for the crash tests (not exported from `oncely/node`): called at
 * each step of every durable write, so a test process can kill itself at an
 * exact point of the protocol, or a test can make a step fail.
 */
export const writeSteps: { hook: ((step: WriteStep) => void) | undefined } = { hook: undefined };

/** Windows cannot open a directory to fsync it; NTFS journals the rename itself. */
const CAN_SYNC_DIRECTORIES = process.platform !== 'win32';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Group-committed fsync of one directory. */
export class DirSync {
  readonly path: string;
  #fd: number | undefined;
  #running: Promise<void> | undefined;
  #queued: Deferred | undefined;
  /** Directory fsyncs performed (for benchmarks: compare with `requests`). */
  rounds = 0;
  /** Durability requests served. */
  requests = 0;

  constructor(path: string) {
    this.path = path;
  }

  /** Resolves once every entry change made in the directory before this call is durable. */
  sync(): Promise<void> {
    this.requests++;
    if (!CAN_SYNC_DIRECTORIES) return Promise.resolve();
    // A round is already queued: it starts after our change, so it covers us.
    if (this.#queued !== undefined) return this.#queued.promise;
    if (this.#running === undefined) return this.#start();
    // The running round may have started before our change: wait for the next.
    this.#queued = deferred();
    return this.#queued.promise;
  }

  #start(): Promise<void> {
    this.rounds++;
    let synced: Promise<void>;
    try {
      const fd = this.#fd ?? fs.openSync(this.path, 'r');
      this.#fd = fd;
      synced = fsyncFile(fd);
    } catch (error) {
      synced = Promise.reject(error);
    }
    const run = synced.finally(() => {
      this.#running = undefined;
      const queued = this.#queued;
      this.#queued = undefined;
      if (queued !== undefined) this.#start().then(queued.resolve, queued.reject);
    });
    this.#running = run;
    return run;
  }

  /** Waits for pending rounds, then closes the directory handle. */
  async close(): Promise<void> {
    while (this.#running !== undefined) await this.#running.catch(() => undefined);
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Removes `dir/name` durably. Resolves false when it did not exist. */
export async function removeDurably(dir: DirSync, name: string): Promise<boolean> {
  try {
    await unlinkFile(join(dir.path, name));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
  await dir.sync();
  return true;
}

/** Moves `from.path/name` to `to.path/target` durably (both directory entries). False when it was gone. */
export async function moveDurably(from: DirSync, name: string, to: DirSync, target: string): Promise<boolean> {
  try {
    await renameFile(join(from.path, name), join(to.path, target));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
  await to.sync();
  await from.sync();
  return true;
}

/** mkdir 0700, and make the new entry itself durable (fsync of each new directory's parent). */
export function makeDirectory(path: string): void {
  const first = fs.mkdirSync(path, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  for (let created = path; ; created = dirname(created)) {
    syncDirectory(dirname(created));
    if (created === first || dirname(created) === created) break;
  }
}

function syncDirectory(path: string): void {
  if (process.platform === 'win32') return;
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
