/**
 * The lines a journal has yet to flush, in order, with who waits for each:
 * a durable write waits for its line's flush; a *relaxed* write
 * (`WriteOptions`) does not, and its line rides the next flush, which the
 * next durable write of this handle (of any record) starts, or a timer
 * `RELAXED_FLUSH_DELAY_MS` later. So a durable write that resolves covers
 * every relaxed write queued before it, unless the flush that took a
 * relaxed line failed, or the line had waited too long to be written
 * (journal.ts): then the checkpoint of that segment, which syncs the
 * records whose lines it lost, covers it.
 *
 * A relaxed write must never cost an earlier durable version: after a power
 * cut its renamed file may come back torn, and only a journal line can
 * restore the record then. So the journal relaxes a write only when it holds
 * a flushed line of the record in a segment that is not being checkpointed
 * (`Segments.anchors`); else it waits for its flush like a durable one.
 */
import type { Runtime } from '../../runtime.js';

/**
 * Relaxed lines queued while no flush runs are flushed this long later (when
 * no durable write flushed them first): how long a relaxed write may stay
 * exposed to a power cut on an otherwise idle handle.
 */
const RELAXED_FLUSH_DELAY_MS = 100;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A queued line (none for a barrier), and who waits for its flush (nobody for a relaxed one). */
export interface Entry {
  /** The line with its newline; empty for a barrier. */
  line: string;
  /** The record file it writes; undefined for a barrier. */
  name: string | undefined;
  /** The revision it writes; undefined for a barrier. */
  rev: number | undefined;
  waiter: Waiter | undefined;
  /** When a relaxed line was queued (the runtime's monotonic clock). */
  queuedAtMs?: number | undefined;
}

export class LineQueue {
  readonly #schedule: Runtime['schedule'];
  readonly #flush: () => void;
  #entries: Entry[] = [];
  /** Cancels the timer that flushes relaxed lines nobody flushed. */
  #cancelTimer: (() => void) | undefined;

  /**
   * @param schedule the timers of relaxed lines
   * @param flush starts a flush (of everything queued) unless one is running
   */
  constructor(schedule: Runtime['schedule'], flush: () => void) {
    this.#schedule = schedule;
    this.#flush = flush;
  }

  get length(): number {
    return this.#entries.length;
  }

  /** The lines queued that `keep` accepts, in order, without taking them (the journal's write at process exit). */
  peekLines(keep: (entry: Entry) => boolean): string {
    let text = '';
    for (const entry of this.#entries) if (keep(entry)) text += entry.line;
    return text;
  }

  /** Queues `line` of record `name` at revision `rev`; resolves once a flush made it durable. */
  durable(line: string, name: string | undefined, rev: number | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#entries.push({ line, name, rev, waiter: { resolve, reject } });
      this.#flush();
    });
  }

  /**
   * Queues `line` of record `name` at revision `rev` with nobody waiting;
   * when no flush is `running`, one starts within `RELAXED_FLUSH_DELAY_MS`.
   */
  relaxed(line: string, name: string, rev: number, running: boolean, queuedAtMs?: number): void {
    this.#entries.push({ line, name, rev, waiter: undefined, queuedAtMs });
    if (!running && this.#cancelTimer === undefined) {
      this.#cancelTimer = this.#schedule(RELAXED_FLUSH_DELAY_MS, () => {
        this.#cancelTimer = undefined;
        this.#flush();
      });
    }
  }

  /** Resolves once everything queued so far is on disk (at once when nothing is queued nor `running`). */
  barrier(running: boolean): Promise<void> {
    if (this.#entries.length === 0 && !running) return Promise.resolve();
    return this.durable('', undefined, undefined);
  }

  /** A flush is starting: the relaxed timer has nothing left to do. */
  cancelTimer(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
  }

  /** Puts `batch` (taken, not written after all) back before everything queued since. */
  putBack(batch: Entry[]): void {
    this.#entries = batch.concat(this.#entries);
  }

  /** Everything queued, in order, for the next round of a flush. */
  take(): Entry[] {
    const batch = this.#entries;
    this.#entries = [];
    return batch;
  }
}
