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
 * one, unless its writer asked for a relaxed write (below).
 *
 * The record files themselves are written without fsync. A process crash
 * loses nothing (the page cache survives it); a power cut can leave a
 * renamed record empty, stale or missing, and then the journal line restores
 * it (recovery.ts). A segment is needed only until the record files it
 * names are durable, so once it is old or large enough the handle starts a
 * new one and, some 35 s later, *checkpoints* the old one in the background: one fsync per
 * distinct record file (an operation's three writes to one record cost one
 * fsync, and usually a cheap one: by then the kernel has written most of it
 * back), one directory fsync, then the segment is deleted.
 *
 * A *relaxed* write (`WriteOptions`) queues its line and is renamed into
 * place at once, without waiting for a flush: its line rides the next flush,
 * which the next durable write of this handle (of any record) starts, or a
 * timer `RELAXED_FLUSH_DELAY_MS` later. So a durable write that resolves
 * covers every relaxed write queued before it. A relaxed write must never
 * cost an earlier durable version: after a power cut its renamed file may
 * come back torn, and only a journal line can restore the record then. So a
 * write is relaxed only when this handle holds a flushed line of the record
 * in a segment that is not being checkpointed (`anchored`); else it waits for
 * its flush like a durable one. And a checkpoint first flushes everything
 * queued, so the segment it deletes never held the only line of a record
 * whose newer relaxed version is not yet durable.
 *
 * Segment names carry the writer's host and pid
 * (`<host>-<pid>-<token>.<n>.log`), so another process can tell the journal
 * of a crashed writer from a live one's (recovery.ts).
 */
import { join } from 'node:path';
import type { Runtime } from '../../runtime.js';
import { checkpoint } from './checkpoint.js';
import type { DirSync } from './durable.js';
import { appendAllSync, closeFile, datasync, openFile, unlinkFile } from './io.js';
import { hostId, randomToken } from './liveness.js';

/**
 * Relaxed lines queued while no flush runs are flushed this long later (when
 * no durable write flushed them first): how long a relaxed write may stay
 * exposed to a power cut on an otherwise idle handle.
 */
const RELAXED_FLUSH_DELAY_MS = 100;

/** A new segment is started once the current one is this old (its records then get checkpointed). */
const SEGMENT_MAX_AGE_MS = 30_000;
/** ... or this large. */
const SEGMENT_MAX_BYTES = 32 * 1024 * 1024;
/**
 * A retired segment is checkpointed this long after it stopped taking lines.
 * By then the kernel has written back the record files it names (Linux
 * writes dirty pages back after 30 s), so their fsyncs find little to do
 * instead of competing with the writes in progress for the disk.
 */
const CHECKPOINT_DELAY_MS = 35_000;

export const SEGMENT_SUFFIX = '.log';

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

/** Tokens of the journals of this process's open store handles. */
const liveTokens = new Set<string>();

/** Whether a segment of this process (by its token) belongs to an open handle. */
export function isLiveJournalToken(token: string): boolean {
  return liveTokens.has(token);
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A queued line (none for a barrier), and who waits for its flush (nobody for a relaxed one). */
interface Entry {
  line: string;
  name: string | undefined;
  waiter: Waiter | undefined;
}

interface Segment {
  path: string;
  fd: number;
  /** When it was opened, on the runtime's monotonic clock. */
  openedAtMs: number;
  bytes: number;
  /** Cancels the retirement of this segment when it stays idle (set once opened). */
  cancelIdleRetire: () => void;
  /** Record files written through this segment: what its checkpoint fsyncs. */
  names: Set<string>;
  /** A flush failed: nothing more is written to it (a failed fsync cannot be retried on the same file). */
  broken: boolean;
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

export class Journal {
  readonly #dir: DirSync;
  readonly #records: DirSync;
  readonly #runtime: Pick<Runtime, 'monotonicNow' | 'schedule'>;
  readonly #token = randomToken();
  #sequence = 0;
  #segment: Segment | undefined;
  #opening: Promise<Segment> | undefined;
  #queue: Entry[] = [];
  #flushing: Promise<void> | undefined;
  /** Cancels the timer that flushes relaxed lines nobody flushed. */
  #cancelRelaxedFlush: (() => void) | undefined;
  readonly #checkpoints = new Set<Promise<void>>();
  /** Retired segments waiting for their checkpoint: starting one now (at close) cancels its timer. */
  readonly #waiting = new Map<Segment, () => void>();
  readonly stats: JournalStats = { lines: 0, flushes: 0, checkpoints: 0, relaxed: 0 };

  /**
   * @param dir the journal directory (created by the store)
   * @param records the record directory, fsynced by checkpoints
   * @param runtime the clock of segment ages and the timers of checkpoints
   */
  constructor(dir: DirSync, records: DirSync, runtime: Pick<Runtime, 'monotonicNow' | 'schedule'>) {
    this.#dir = dir;
    this.#records = records;
    this.#runtime = runtime;
    liveTokens.add(this.#token);
  }

  /** Resolves once `line` is on disk (its flush's `fdatasync` returned), with every line queued before it. */
  append(line: JournalLine): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ line: `${JSON.stringify(line)}\n`, name: line.n, waiter: { resolve, reject } });
      this.#startFlush();
    });
  }

  /**
   * Queues `line` without waiting for its flush, when that is safe (see the
   * top of this file): true. False when the record's only recoverable
   * version may be its file, and the caller must `append` instead.
   * Synchronous, so the decision and the queueing happen before the caller's
   * rename, and no checkpoint starts in between.
   */
  appendRelaxed(line: JournalLine, replacesFile: boolean): boolean {
    if (replacesFile && !this.#anchored(line.n)) return false;
    this.#queue.push({ line: `${JSON.stringify(line)}\n`, name: line.n, waiter: undefined });
    this.stats.relaxed++;
    if (this.#flushing === undefined && this.#cancelRelaxedFlush === undefined) {
      this.#cancelRelaxedFlush = this.#runtime.schedule(RELAXED_FLUSH_DELAY_MS, () => {
        this.#cancelRelaxedFlush = undefined;
        this.#startFlush();
      });
    }
    return true;
  }

  /** Resolves once everything queued so far is on disk (nothing when nothing is queued). */
  #barrier(): Promise<void> {
    if (this.#queue.length === 0 && this.#flushing === undefined) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ line: '', name: undefined, waiter: { resolve, reject } });
      this.#startFlush();
    });
  }

  /** This handle holds a flushed line of record `name` in a segment no checkpoint has started on. */
  #anchored(name: string): boolean {
    if (this.#segment?.names.has(name) === true && !this.#segment.broken) return true;
    for (const segment of this.#waiting.keys()) if (!segment.broken && segment.names.has(name)) return true;
    return false;
  }

  #startFlush(): void {
    this.#cancelRelaxedFlush?.();
    this.#cancelRelaxedFlush = undefined;
    if (this.#flushing === undefined && this.#queue.length > 0) this.#flushing = this.#flush();
  }

  /** Writes and syncs everything queued, round after round, until the queue is empty. */
  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      try {
        const segment = await this.#current();
        const bytes = Buffer.from(batch.map((entry) => entry.line).join(''), 'utf8');
        try {
          // Written synchronously (page cache only, like the claim files: cheaper than a thread-pool round
          // trip, and a sequential write then waits for one round trip, the fdatasync, instead of two).
          appendAllSync(segment.fd, bytes);
          await datasync(segment.fd);
        } catch (error) {
          segment.broken = true;
          // Named anyway: its checkpoint fsyncs them, which is what their writers needed.
          for (const entry of batch) if (entry.name !== undefined) segment.names.add(entry.name);
          throw error;
        }
        // Named once flushed: only a flushed line anchors a relaxed write (`appendRelaxed`).
        for (const entry of batch) if (entry.name !== undefined) segment.names.add(entry.name);
        segment.bytes += bytes.length;
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

  /** The segment to append to: a new one when there is none, it broke, or it is due for a checkpoint. */
  async #current(): Promise<Segment> {
    const segment = this.#segment;
    if (
      segment !== undefined &&
      !segment.broken &&
      this.#runtime.monotonicNow() - segment.openedAtMs < SEGMENT_MAX_AGE_MS &&
      segment.bytes < SEGMENT_MAX_BYTES
    ) {
      return segment;
    }
    if (segment !== undefined) this.#retire(segment);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #open(): Promise<Segment> {
    const name = `${hostId()}-${process.pid}-${this.#token}.${this.#sequence++}${SEGMENT_SUFFIX}`;
    const path = join(this.#dir.path, name);
    const fd = await openFile(path, 'ax', 0o600);
    try {
      // The segment's own directory entry must survive a power cut before any line in it counts.
      await this.#dir.sync();
    } catch (error) {
      // Not a segment after all: release the descriptor and the empty file (the next append opens another).
      await closeFile(fd).catch(() => undefined);
      await unlinkFile(path).catch(() => undefined);
      throw error;
    }
    const segment: Segment = {
      path,
      fd,
      openedAtMs: this.#runtime.monotonicNow(),
      bytes: 0,
      names: new Set(),
      broken: false,
      cancelIdleRetire: () => undefined,
    };
    this.#segment = segment;
    // An idle handle still checkpoints: its record files become durable on their own and the segment goes.
    segment.cancelIdleRetire = this.#runtime.schedule(SEGMENT_MAX_AGE_MS, () => {
      if (this.#segment === segment && this.#flushing === undefined) this.#retire(segment);
    });
    return segment;
  }

  /** Stops writing to `segment`; it is checkpointed in the background, `CHECKPOINT_DELAY_MS` later. */
  #retire(segment: Segment): void {
    if (this.#segment === segment) this.#segment = undefined;
    segment.cancelIdleRetire();
    this.#waiting.set(
      segment,
      this.#runtime.schedule(CHECKPOINT_DELAY_MS, () => this.#checkpoint(segment)),
    );
  }

  #checkpoint(segment: Segment): void {
    this.#waiting.get(segment)?.();
    // From here on its lines anchor no relaxed write; those queued before are flushed before it goes.
    this.#waiting.delete(segment);
    const done = this.#barrier()
      .then(() => checkpoint(segment.path, segment.names, this.#records, segment.fd))
      .then(
        () => {
          this.stats.checkpoints++;
        },
        (error: unknown) => {
          // The segment stays on disk: recovery checkpoints it later. Nothing is lost.
          process.emitWarning(`oncely: journal checkpoint of ${segment.path} failed: ${String(error)}`);
        },
      );
    this.#checkpoints.add(done);
    void done.then(() => this.#checkpoints.delete(done));
  }

  /** Flushes what is queued, checkpoints every segment and removes them. */
  async close(): Promise<void> {
    this.#startFlush();
    while (this.#flushing !== undefined) await this.#flushing;
    await this.#opening?.catch(() => undefined);
    if (this.#segment !== undefined) this.#retire(this.#segment);
    for (const segment of [...this.#waiting.keys()]) this.#checkpoint(segment);
    while (this.#checkpoints.size > 0) await Promise.all(this.#checkpoints);
    await this.#dir.close();
    liveTokens.delete(this.#token);
  }
}
