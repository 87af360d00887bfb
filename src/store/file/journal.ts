/**
 * The write-ahead journal of one store handle: how a record write becomes
 * durable with one shared `fdatasync` instead of an fsync of its own file.
 *
 * A write appends one line, `{"n":<file name>,"r":<rev>,"t":<stored text>}`
 * (or `"d":1` for a removal), to this handle's journal segment. Lines
 * appended while a flush is running wait for the next one, and that single
 * `write` + `fdatasync` covers all of them (group commit): 32 concurrent
 * writers cost about one disk flush, not 32. Only once its line is durable
 * is a record renamed into place, so a record anyone can read is a durable
 * one, unless its writer asked for a relaxed write (line-queue.ts).
 *
 * The record files themselves are written without fsync. A process crash
 * loses nothing (the page cache survives it); a power cut can leave a
 * renamed record empty, stale or missing, and then the journal line restores
 * it (recovery.ts). Old segments are checkpointed and deleted in the
 * background (segments.ts).
 */
import * as fs from 'node:fs';
import type { Runtime } from '../../runtime.js';
import type { DirSync } from './durable.js';
import { datasync, writeTextSync } from './io.js';
import { type Entry, LineQueue } from './line-queue.js';
import type { Machine } from './machine.js';
import { registerOpenJournal, unregisterOpenJournal } from './open-journals.js';
import type { RemovedRecords } from './removed.js';
import { type Segment, Segments } from './segments.js';
import { randomToken } from './token.js';

export { isLiveJournalToken } from './open-journals.js';
export { SEGMENT_SUFFIX } from './segments.js';

/** One line of a journal segment. */
export interface JournalLine {
  /** Record file name. */
  n: string;
  /** Revision of the record file this line writes (see `nextRev`). */
  r: number;
  /** The stored file text (record line + writer line). Absent for a removal. */
  t?: string;
  /** 1 for a removal. */
  d?: 1;
}

/**
 * Revision of the next version of a record: above the current one, and at
 * least the wall clock, so a record removed and written again (its old
 * revision gone with its file) still sorts after anything an old journal
 * holds for it.
 */
export function nextRev(currentRev: number, nowMs: number): number {
  return Math.max(currentRev + 1, nowMs);
}

/** Segments found deleted right after a flush, in a row, before the flush gives up (see `#flush`). */
const MAX_UNLINKED_IN_A_ROW = 3;

/** A relaxed line not flushed this long after it was queued is not written (see `#withoutStale`). */
const STALE_RELAXED_MS = 30_000;

/** The lines of a batch, in order, as one string. */
function joinLines(batch: readonly Entry[]): string {
  let text = '';
  for (const entry of batch) text += entry.line;
  return text;
}

/** Counters for benchmarks and tests. */
export interface JournalStats {
  /** Lines made durable. */
  lines: number;
  /** `fdatasync` calls (rounds of group commit). */
  flushes: number;
  /** Segments checkpointed and removed. */
  checkpoints: number;
  /** Lines queued by relaxed writes (not waited for). */
  relaxed: number;
}

/** The optional parts of a journal. */
export interface JournalParts {
  /** Where deletions moved their records (removed.ts), synced and pruned by checkpoints. */
  removed?: RemovedRecords | undefined;
  /** Writes a record whose fsync failed again, into a new file (checkpoint.ts). */
  resync?: ((name: string) => Promise<void>) | undefined;
  /** For an exclusive store, whose record files are written behind its journal (segments.ts). */
  behind?: { beforeCheckpoint: () => Promise<void> } | undefined;
  /** Names the writer and its boot in each segment's name. */
  machine: Machine;
}

export class Journal {
  readonly #token = randomToken();
  readonly #queue: LineQueue;
  readonly #segments: Segments;
  readonly #runtime: Pick<Runtime, 'monotonicNow'>;
  #flushing: Promise<void> | undefined;
  /** The batch a flush took and has not written yet (the write at exit writes it too). */
  #unwritten: readonly Entry[] = [];
  readonly stats: JournalStats = { lines: 0, flushes: 0, checkpoints: 0, relaxed: 0 };

  /**
   * @param dir the journal directory (created by the store)
   * @param records the record directory, fsynced by checkpoints
   * @param runtime the clock of segment ages and the timers of checkpoints and relaxed lines
   */
  constructor(
    dir: DirSync,
    records: DirSync,
    runtime: Pick<Runtime, 'monotonicNow' | 'schedule'>,
    { removed, resync, behind, machine }: JournalParts,
  ) {
    this.#runtime = runtime;
    this.#queue = new LineQueue(runtime.schedule, () => this.#startFlush());
    this.#segments = new Segments({
      dir,
      records,
      removed,
      resync,
      behind,
      runtime,
      machine,
      token: this.#token,
      barrier: () => this.#queue.barrier(this.#flushing !== undefined),
      flushing: () => this.#flushing !== undefined,
      onCheckpoint: () => {
        this.stats.checkpoints++;
      },
    });
    registerOpenJournal(this.#token, this);
  }

  /**
   * Writes the lines still queued into the open segment, synchronously and
   * without an fsync (see open-journals.ts), with the batch a running flush
   * took and has not written yet. Never throws: it runs as the process
   * exits.
   */
  writeQueuedSync(): void {
    // Without the stale relaxed lines a flush would leave out too (see `#withoutStale`).
    const nowMs = this.#runtime.monotonicNow();
    const fresh = (entry: Entry) => entry.queuedAtMs === undefined || nowMs - entry.queuedAtMs <= STALE_RELAXED_MS;
    const text = joinLines(this.#unwritten.filter(fresh)) + this.#queue.peekLines(fresh);
    if (text.length === 0) return;
    try {
      // No segment open (the last one retired, or a flush is opening the next): one is opened here, synchronously.
      const fd = this.#segments.open?.fd ?? this.#segments.openSyncAtExit();
      writeTextSync(fd, text, null);
    } catch {
      // The process is ending: nothing left to tell.
    }
  }

  /** Resolves once `line` is on disk (its flush's `fdatasync` returned), with every line queued before it. */
  append(line: JournalLine): Promise<void> {
    this.#segments.written(line.n, line.r);
    return this.#queue.durable(`${JSON.stringify(line)}\n`, line.n, line.r);
  }

  /**
   * Queues `line` without waiting for its flush, when that is safe (see
   * line-queue.ts): true. False when the version it replaces (revision
   * `replacesRev`; undefined when there is no file yet) may have no other
   * recoverable copy than its file, and the caller must `append` instead.
   * Synchronous, so the decision and the queueing happen before the
   * caller's rename, and no checkpoint starts in between.
   */
  appendRelaxed(line: JournalLine, replacesRev: number | undefined): boolean {
    if (replacesRev !== undefined && !this.#segments.anchors(line.n, replacesRev)) return false;
    this.#segments.written(line.n, line.r);
    this.#queue.relaxed(
      `${JSON.stringify(line)}\n`,
      line.n,
      line.r,
      this.#flushing !== undefined,
      this.#runtime.monotonicNow(),
    );
    this.stats.relaxed++;
    return true;
  }

  /** Resolves once every line queued so far (relaxed ones included) is durable. */
  flushed(): Promise<void> {
    return this.#queue.barrier(this.#flushing !== undefined);
  }

  #startFlush(): void {
    this.#queue.cancelTimer();
    if (this.#flushing === undefined && this.#queue.length > 0) this.#flushing = this.#flush();
  }

  /** Writes and syncs everything queued, round after round, until the queue is empty. */
  async #flush(): Promise<void> {
    let unlinkedInARow = 0;
    while (this.#queue.length > 0) {
      let batch = this.#queue.take();
      this.#unwritten = batch;
      try {
        const segment = await this.#segments.current();
        batch = this.#withoutStale(batch, segment);
        this.#unwritten = batch;
        if (batch.length === 0) continue;
        let bytes: number;
        try {
          // Written synchronously (page cache only, like the claim files: cheaper than a thread-pool round
          // trip, and a sequential write then waits for one round trip, the fdatasync, instead of two).
          bytes = writeTextSync(segment.fd, batch.length === 1 ? (batch[0] as Entry).line : joinLines(batch), null);
          this.#unwritten = [];
          await datasync(segment.fd);
          if (fs.fstatSync(segment.fd).nlink === 0) {
            // Deleted under us (another process settled it, taking this writer for a dead one): lines in an
            // unlinked file would not survive a power cut. Written again, in a new segment; after a few
            // tries in a row, the writes fail rather than resolve on lines nothing keeps.
            segment.broken = true;
            if (++unlinkedInARow > MAX_UNLINKED_IN_A_ROW)
              throw new Error(`journal segment ${segment.path} was deleted as it was written`);
            this.#queue.putBack(batch);
            continue;
          }
          unlinkedInARow = 0;
        } catch (error) {
          segment.broken = true;
          // Named anyway (their lines may be missing from the file): its checkpoint fsyncs them, which is what
          // their writers needed.
          segment.unwritten ??= new Set();
          for (const entry of batch) if (entry.name !== undefined) segment.unwritten.add(entry.name);
          throw error;
        }
        // Anchored once flushed: only a flushed line anchors a relaxed write (`appendRelaxed`).
        for (const entry of batch) {
          if (entry.name !== undefined && entry.rev !== undefined)
            this.#segments.flushed(entry.name, entry.rev, segment);
        }
        segment.bytes += bytes;
        this.stats.flushes++;
        for (const entry of batch) {
          if (entry.name !== undefined) this.stats.lines++;
          entry.waiter?.resolve();
        }
      } catch (error) {
        let unheard = false;
        for (const entry of batch) {
          if (entry.waiter === undefined) unheard = true;
          else entry.waiter.reject(error);
        }
        // Relaxed writes resolved long ago: nobody else hears of it. Their records stay as written;
        // a power cut before the checkpoint may take them back to their last durable version.
        if (unheard) process.emitWarning(`oncely: journal flush failed: ${String(error)}`);
      }
    }
    this.#flushing = undefined;
  }

  /**
   * `batch` without the relaxed lines queued more than `STALE_RELAXED_MS`
   * ago (the process was frozen, or the disk stalled): written now, in a
   * segment started after a deletion of their record, such a line could
   * outlive the deletion's entry in `removed/` (kept a minute past the
   * segments older than it) and bring the record back after a power cut.
   * The checkpoint of `segment` syncs their records as they are instead.
   */
  #withoutStale(batch: Entry[], segment: Segment): Entry[] {
    const nowMs = this.#runtime.monotonicNow();
    const stale = (entry: Entry) => entry.queuedAtMs !== undefined && nowMs - entry.queuedAtMs > STALE_RELAXED_MS;
    if (!batch.some(stale)) return batch;
    segment.unwritten ??= new Set();
    for (const entry of batch) if (stale(entry) && entry.name !== undefined) segment.unwritten.add(entry.name);
    return batch.filter((entry) => !stale(entry));
  }

  /** Flushes what is queued, checkpoints every segment and removes them. */
  async close(): Promise<void> {
    try {
      this.#startFlush();
      while (this.#flushing !== undefined) await this.#flushing;
      await this.#segments.close();
    } finally {
      // Even when a checkpoint failed: its segments are then a dead writer's, settled by recovery.
      unregisterOpenJournal(this.#token, this);
    }
  }
}
