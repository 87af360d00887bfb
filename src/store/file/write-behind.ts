/**
 * Write-behind of record files, for an exclusive file store (exclusive.ts).
 *
 * An exclusive handle makes a write durable with its journal line alone and
 * keeps the new version here, in memory. Shortly after (`delayMs`), one pass
 * writes every record that changed into its file, in place: an operation's
 * writes within that moment cost one file write between them, and no write
 * waits for a file at all. A shared store pays a claim file and a rename per
 * write instead (claim.md), because other processes write the same files.
 *
 * Why each step is safe:
 * - a version is written into its file only once its journal line is
 *   durable (the pass waits for the journal first), so a file is never
 *   ahead of the journal, and a crash in the middle of a write (a torn file)
 *   is repaired by replaying that line (recovery.ts replays every segment of
 *   an exclusive writer);
 * - a checkpoint runs a pass before it fsyncs the files its segment names
 *   and deletes the segment, so every version the segment holds is in its
 *   file by then;
 * - readers of this handle look here first; nobody else reads while the
 *   owner lives (owner.ts).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Runtime } from '../../runtime.js';
import { writeSteps } from './durable.js';
import { isErrno, openFile, truncateFile, typeOf, writeAt } from './io.js';

/** The latest version of a record not yet in its file: the whole file text and its revision. */
export interface Behind {
  text: string;
  rev: number;
  /**
   * Set while the record of this key is being removed (its removal line is
   * durable, its file not yet moved aside): readers see no record, and no
   * pass writes one.
   */
  removedKey?: string;
}

/** What a pass needs from its store. */
export interface WriteBehindContext {
  /** The record directory. */
  dir: string;
  /** Resolves once every journal line queued so far is durable. */
  journalFlushed(): Promise<void>;
  /**
   * Runs `task` in the record's queue (keyed-queue.ts): a pass's write never
   * interleaves with the store's updates, removals, rechecks or recovery
   * writes of the same record, which read its file and may replace it.
   */
  inQueue<T>(name: string, task: () => Promise<T>): Promise<T>;
  /** Moves something that is not a regular file out of a record's way, reporting it (quarantine.ts). */
  quarantineOdd(name: string, found: { kind: 'odd'; type: string }): Promise<void>;
  /** Whether this handle still owns the directory (owner.ts): a pass that lost it writes nothing. */
  owned(): boolean;
  runtime: Pick<Runtime, 'schedule'>;
  /** How long after a write its file is written. @default 50 */
  delayMs?: number;
}

/** Moves of something that is not a regular file out of a record's way, before a write gives up. */
const MAX_MOVES_ASIDE = 3;

/** Default of `delayMs`: long enough for the writes of one operation (ms apart) to share one file write. */
const WRITE_BEHIND_MS = 50;

export class WriteBehind {
  readonly #c: WriteBehindContext;
  readonly #pending = new Map<string, Behind>();
  #cancelTimer: (() => void) | undefined;
  /** The pass running now: passes never overlap. */
  #running: Promise<void> | undefined;
  /** Files written (for `fileStoreStats`). */
  written = 0;

  constructor(context: WriteBehindContext) {
    this.#c = context;
  }

  /** The version of `name` not yet in its file, if any. */
  get(name: string): Behind | undefined {
    return this.#pending.get(name);
  }

  /** Keeps `version` as the latest of `name` (its journal line is queued) and schedules a pass. */
  set(name: string, version: Behind): void {
    this.#pending.set(name, version);
    this.#cancelTimer ??= this.#c.runtime.schedule(this.#c.delayMs ?? WRITE_BEHIND_MS, () => {
      this.#cancelTimer = undefined;
      this.flush().catch((error: unknown) => {
        // Kept in memory and in the journal: the next pass (or the checkpoint's) tries again.
        process.emitWarning(`oncely: writing record files behind the journal failed: ${String(error)}`);
      });
    });
  }

  /** Every version waiting for its file, by record name. */
  entries(): IterableIterator<[string, Behind]> {
    return this.#pending.entries();
  }

  /**
   * Hides the record of `name` (`key`) from readers while it is removed:
   * returns the mark to give to `drop` once its file is moved aside.
   */
  hide(name: string, key: string, rev: number): Behind {
    const mark: Behind = { text: '', rev, removedKey: key };
    this.#pending.set(name, mark);
    return mark;
  }

  /** Forgets `mark` (from `hide`), unless a newer version replaced it; `before` takes its place when given. */
  drop(name: string, mark: Behind, before?: Behind): void {
    if (this.#pending.get(name) !== mark) return;
    if (before === undefined) this.#pending.delete(name);
    else this.set(name, before);
  }

  /** Versions waiting for their file. */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Writes every version pending now into its file (after their journal
   * lines are durable); versions set meanwhile wait for the next pass.
   * Resolves when they are all written. One pass at a time.
   */
  async flush(): Promise<void> {
    while (this.#running !== undefined) await this.#running.catch(() => undefined);
    if (this.#pending.size === 0) return;
    this.#running = this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(): Promise<void> {
    const batch = [...this.#pending];
    await this.#c.journalFlushed();
    this.#assertOwned();
    let failure: unknown;
    for (const [name, version] of batch) {
      // Replaced since the batch was taken (its line may not be durable yet: the next pass writes it), or
      // removed.
      if (this.#pending.get(name) !== version || version.removedKey !== undefined) continue;
      try {
        if (!(await this.#c.inQueue(name, () => this.#write(name, version)))) continue;
      } catch (error) {
        // One file that cannot be written holds back no other: the others go on, the error after them.
        failure ??= error;
        continue;
      }
      // Only the version written: a newer one set while this write awaited stays for the next pass.
      if (this.#pending.get(name) === version) this.#pending.delete(name);
      this.written++;
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * Writes `version` over the file of `name`, in place: no temp file and no
   * rename, which would each change the directory. Opened without following
   * a link and without blocking; anything there that is not a regular file
   * is moved aside first (a few times at most). False when the version was
   * replaced or removed while that move awaited: nothing written.
   *
   * The open, the write and the truncation run on the thread pool (io.ts):
   * creating a file, or changing its size, waits for the file system's
   * journal commit that the store's own `fdatasync` keeps starting, and a
   * synchronous call made the whole process wait with it (~0.6 ms per
   * operation, sequentially, in a profile). The record's queue keeps every
   * other writer of this file out meanwhile, and a write cut short by a
   * crash or by `process.exit()` is repaired by replaying its durable line
   * (every reader replays a dead owner's journal first).
   */
  async #write(name: string, version: Behind): Promise<boolean> {
    const path = join(this.#c.dir, name);
    for (let moved = 0; ; moved++) {
      if (this.#pending.get(name) !== version) return false;
      // Looked at again for each file (a trusted look costs nothing): a pass that lost the directory while it
      // waited for a record's queue must not write over the new owner's file.
      this.#assertOwned();
      if (moved > MAX_MOVES_ASIDE) throw new Error(`${path} is not a regular file and could not be moved aside`);
      let fd: number;
      try {
        fd = await openFile(path, WRITE_FLAGS, 0o600);
      } catch (error) {
        if (!(isErrno(error, 'ENXIO') || isErrno(error, 'EISDIR') || isErrno(error, 'ELOOP'))) throw error;
        await this.#c.quarantineOdd(name, { kind: 'odd', type: typeOf(fs.lstatSync(path)) });
        continue;
      }
      let odd: fs.Stats | undefined;
      try {
        const stat = fs.fstatSync(fd);
        if (stat.isFile()) {
          const bytes = Buffer.from(version.text);
          // Asked again after the open: the directory may have been taken over while the thread pool ran
          // it (this process frozen, its claim gone stale). The open itself may then have created an
          // empty file where the new owner has none; it reads as a bad record and is quarantined, the
          // record staying as the new owner has it. A write already handed to the thread pool when the
          // process froze cannot be called back: that gap is as narrow as the pool's queue.
          this.#assertOwned();
          await writeAt(fd, bytes, 0);
          if (stat.size > bytes.length) await truncateFile(fd, bytes.length);
          writeSteps.hook?.('written-behind');
          return true;
        }
        odd = stat;
      } finally {
        fs.closeSync(fd);
      }
      await this.#c.quarantineOdd(name, { kind: 'odd', type: typeOf(odd) });
    }
  }

  #assertOwned(): void {
    if (!this.#c.owned()) throw new Error(`the store at ${this.#c.dir} is no longer owned by this handle`);
  }

  /** Stops the timer (the store writes everything itself before it closes). */
  cancel(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
  }
}

/** Create if missing, never follow a link, never block on a FIFO; truncated only once known to be a file. */
const WRITE_FLAGS =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
