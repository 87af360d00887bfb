/**
 * The segments of one handle's journal: which one takes the next lines, when
 * a new one is started, and when an old one is checkpointed and deleted.
 *
 * A segment is needed only until the record files it names are durable, so
 * once it is old or large enough the handle starts a new one and, some 35 s
 * later, *checkpoints* the old one in the background: one fsync per distinct
 * record file (all of an operation's writes to one record cost one fsync, and
 * usually a cheap one: by then the kernel has written most of it back), one
 * directory fsync, then the segment is deleted (checkpoint.ts).
 *
 * The segments also say which records a relaxed write may skip the flush for
 * (`anchors`, line-queue.ts): those whose version it replaces this handle
 * wrote itself, with a flushed line of that record (that version's or an
 * earlier one of its own) in a segment no checkpoint has started on. Who
 * wrote the version matters: another process may have written the record
 * since this handle's line, durably, and checkpointed its own journal; a
 * torn file after a power cut would then bring back this handle's older
 * version and lose that durable one. Versions this handle wrote since its
 * flushed line are its own relaxed writes, which a power cut may take back. A checkpoint therefore first flushes everything queued (the
 * journal's barrier), so the segment it deletes never held the only line of
 * a record whose newer relaxed version is not yet durable.
 *
 * Memory stays bounded however long the writes go on: a segment holds no
 * list of its records (its checkpoint reads them back from the file:
 * segment-names.ts), and the anchors are the last `ANCHORED_NAMES` records
 * flushed. A relaxed write follows its record's durable one within moments
 * (the write-ahead, then the result), so a record that has dropped out of
 * that window only costs its relaxed write a flush, never safety.
 *
 * Segment names carry the writer's host, pid and boot, and when the
 * segment was started (`<host>-<pid>-<token>-b<boot>-t<ms>.<n>.log`; no boot
 * part where the system has no boot id), so another process can tell the
 * journal of a crashed writer from a live one's, one a power cut left from
 * one of this boot (recovery.ts), and which deletions a segment may predate
 * (removed.ts).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Runtime } from '../../runtime.js';
import { checkpoint } from './checkpoint.js';
import type { DirSync } from './durable.js';
import { closeFile, openFile, unlinkFile } from './io.js';
import type { Machine } from './machine.js';
import type { RemovedRecords } from './removed.js';
import { newSegmentName } from './segment-file.js';

/** A new segment is started once the current one is this old (its records then get checkpointed). */
const SEGMENT_MAX_AGE_MS = 30_000;
/** ... or this large. */
const SEGMENT_MAX_BYTES = 32 * 1024 * 1024;
/** An idle segment whose retirement met a running flush looks again this much later. */
const IDLE_RETRY_MS = 1_000;
/**
 * A retired segment is checkpointed this long after it stopped taking lines.
 * By then the kernel has written back the record files it names (Linux
 * writes dirty pages back after 30 s), so their fsyncs find little to do
 * instead of competing with the writes in progress for the disk.
 */
const CHECKPOINT_DELAY_MS = 35_000;
/**
 * Records whose last flushed line is remembered as an anchor for a relaxed
 * write (see the top of this file): room for some 2,000 operations in flight
 * between their durable write and their relaxed one, at about 100 bytes each.
 */
const ANCHORED_NAMES = 4_096;

export { SEGMENT_SUFFIX } from './segment-names.js';

export interface Segment {
  path: string;
  fd: number;
  /** When it was opened, on the runtime's monotonic clock. */
  openedAtMs: number;
  bytes: number;
  /** Cancels the retirement of this segment when it stays idle (set once opened). */
  cancelIdleRetire: () => void;
  /**
   * Records whose lines may be missing from this segment's file (a flush into
   * it failed): its checkpoint syncs them besides those the file names.
   */
  unwritten: Set<string> | undefined;
  /** A flush failed: nothing more is written to it (a failed fsync cannot be retried on the same file). */
  broken: boolean;
  /** Its checkpoint has started: its lines anchor no relaxed write any more. */
  checkpointing: boolean;
}

/** What the segments need from their journal. */
export interface SegmentsContext {
  /** The journal directory (created by the store). */
  dir: DirSync;
  /** The record directory, fsynced by checkpoints. */
  records: DirSync;
  /** Where deletions moved their records: synced and pruned by checkpoints. */
  removed?: RemovedRecords | undefined;
  /** Writes a record whose fsync failed again, into a new file (checkpoint.ts). */
  resync?: ((name: string) => Promise<void>) | undefined;
  /** The clock of segment ages and the timers of checkpoints. */
  runtime: Pick<Runtime, 'monotonicNow' | 'schedule'>;
  /** The journal's token, in every segment name. */
  token: string;
  /** This process's host and boot, in every segment name. */
  machine: Machine;
  /** Resolves once every line queued so far is flushed: a checkpoint waits for it first. */
  barrier: () => Promise<void>;
  /** A flush is running (an idle segment is not retired under it). */
  flushing: () => boolean;
  /** Counted once a checkpoint has removed its segment. */
  onCheckpoint: () => void;
  /** How many records' anchors are remembered (tests make it small). @default 4096 */
  anchorLimit?: number;
  /**
   * An exclusive store's journal: its segments are named `….behind.log`
   * (always replayed after a crash), and `beforeCheckpoint` writes the record
   * files behind it before a checkpoint fsyncs them (write-behind.ts).
   */
  behind?: { beforeCheckpoint: () => Promise<void> } | undefined;
}

export class Segments {
  readonly #c: SegmentsContext;
  #sequence = 0;
  #segment: Segment | undefined;
  #opening: Promise<Segment> | undefined;
  readonly #checkpoints = new Set<Promise<void>>();
  /** Retired segments waiting for their checkpoint: starting one now (at close) cancels its timer. */
  readonly #waiting = new Map<Segment, () => void>();
  /**
   * Per record, for the last `anchorLimit` records written, oldest first:
   * the revision of the last line this handle queued, and the segment of the
   * last one flushed.
   */
  readonly #anchored = new Map<string, { rev: number; segment: Segment | undefined }>();
  readonly #anchorLimit: number;

  constructor(context: SegmentsContext) {
    this.#c = context;
    this.#anchorLimit = context.anchorLimit ?? ANCHORED_NAMES;
  }

  /** This handle queued a line of revision `rev` of record `name` (the version now in its file, or about to be). */
  written(name: string, rev: number): void {
    const anchor = this.#anchored.get(name);
    this.#remember(name, { rev, segment: anchor?.segment });
  }

  /** A line of revision `rev` of record `name` is flushed, in `segment`. */
  flushed(name: string, rev: number, segment: Segment): void {
    const anchor = this.#anchored.get(name);
    // Lines of one record are flushed in the order they were queued: a later one may be queued already.
    this.#remember(name, { rev: anchor === undefined ? rev : anchor.rev, segment });
  }

  /**
   * A relaxed write replacing revision `rev` of record `name` may skip the
   * flush: this handle wrote that revision, and holds a flushed line of the
   * record in a segment no checkpoint has started on.
   */
  anchors(name: string, rev: number): boolean {
    const anchor = this.#anchored.get(name);
    const segment = anchor?.segment;
    return anchor?.rev === rev && segment !== undefined && !segment.broken && !segment.checkpointing;
  }

  #remember(name: string, anchor: { rev: number; segment: Segment | undefined }): void {
    this.#anchored.delete(name);
    this.#anchored.set(name, anchor);
    if (this.#anchored.size > this.#anchorLimit) this.#anchored.delete(this.#anchored.keys().next().value as string);
  }

  /** The segment lines go to now, if one is open and whole (no waiting, no new one). */
  get open(): Segment | undefined {
    const segment = this.#segment;
    return segment === undefined || segment.broken ? undefined : segment;
  }

  /** The segment to append to: a new one when there is none, it broke, or it is due for a checkpoint. */
  async current(): Promise<Segment> {
    const segment = this.#segment;
    if (
      segment !== undefined &&
      !segment.broken &&
      this.#c.runtime.monotonicNow() - segment.openedAtMs < SEGMENT_MAX_AGE_MS &&
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

  /** The path of this journal's next segment. */
  #nextPath(): string {
    const { dir, token, behind, machine } = this.#c;
    return join(dir.path, newSegmentName(machine, token, this.#sequence++, behind !== undefined));
  }

  /**
   * A segment opened synchronously, for the journal's write as the process
   * exits (journal.ts `writeQueuedSync`): no directory fsync (a process exit
   * keeps the page cache), and nobody checkpoints it: whoever settles this
   * writer's journal next does.
   */
  openSyncAtExit(): number {
    return fs.openSync(this.#nextPath(), 'ax', 0o600);
  }

  async #open(): Promise<Segment> {
    const { dir, runtime } = this.#c;
    const path = this.#nextPath();
    const fd = await openFile(path, 'ax', 0o600);
    try {
      // The segment's own directory entry must survive a power cut before any line in it counts.
      await dir.sync();
    } catch (error) {
      // Not a segment after all: release the descriptor and the empty file (the next append opens another).
      await closeFile(fd).catch(() => undefined);
      await unlinkFile(path).catch(() => undefined);
      throw error;
    }
    const segment: Segment = {
      path,
      fd,
      openedAtMs: runtime.monotonicNow(),
      bytes: 0,
      unwritten: undefined,
      broken: false,
      checkpointing: false,
      cancelIdleRetire: () => undefined,
    };
    this.#segment = segment;
    this.#retireWhenIdle(segment, SEGMENT_MAX_AGE_MS);
    return segment;
  }

  /**
   * An idle handle still checkpoints: its record files become durable on
   * their own and the segment goes. Not under a running flush (which writes
   * to it): then it looks again shortly, or a segment of a handle that went
   * idle right then would stay current until the handle closes.
   */
  #retireWhenIdle(segment: Segment, delayMs: number): void {
    segment.cancelIdleRetire = this.#c.runtime.schedule(delayMs, () => {
      if (this.#segment !== segment) return;
      if (this.#c.flushing()) this.#retireWhenIdle(segment, IDLE_RETRY_MS);
      else this.#retire(segment);
    });
  }

  /** Stops writing to `segment`; it is checkpointed in the background, `CHECKPOINT_DELAY_MS` later. */
  #retire(segment: Segment): void {
    if (this.#segment === segment) this.#segment = undefined;
    segment.cancelIdleRetire();
    this.#waiting.set(
      segment,
      this.#c.runtime.schedule(CHECKPOINT_DELAY_MS, () => this.#checkpoint(segment)),
    );
  }

  #checkpoint(segment: Segment): void {
    this.#waiting.get(segment)?.();
    // From here on its lines anchor no relaxed write; those queued before are flushed before it goes.
    this.#waiting.delete(segment);
    segment.checkpointing = true;
    const done = this.#c
      .barrier()
      .then(() => this.#c.behind?.beforeCheckpoint())
      .then(() =>
        checkpoint(segment.path, this.#c.records, {
          fd: segment.fd,
          unwritten: segment.unwritten,
          removed: this.#c.removed,
          resync: this.#c.resync,
        }),
      )
      .then(this.#c.onCheckpoint, (error: unknown) => {
        // The segment stays on disk (marked for a rewrite of its records when an fsync failed, which the
        // message says): recovery settles it once this writer is gone.
        process.emitWarning(`oncely: journal checkpoint of ${segment.path} failed: ${String(error)}`);
      });
    this.#checkpoints.add(done);
    void done.then(() => this.#checkpoints.delete(done));
  }

  /** Checkpoints every segment and removes them (the journal has flushed everything first). */
  async close(): Promise<void> {
    await this.#opening?.catch(() => undefined);
    if (this.#segment !== undefined) this.#retire(this.#segment);
    for (const segment of [...this.#waiting.keys()]) this.#checkpoint(segment);
    while (this.#checkpoints.size > 0) await Promise.all(this.#checkpoints);
    await this.#c.dir.close();
  }
}
