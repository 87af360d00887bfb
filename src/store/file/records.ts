/**
 * The record files of one store handle: exclusive access to one of them
 * (in-process queue, then its claim), reading one with or without its
 * claim, quarantining a bad one, committing a new version, restoring one
 * from the journal, and moving one filed under an older name. store.ts
 * composes these into the public operations.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { isTerminal, type OperationRecord } from '../../model.js';
import type { Updater } from '../store.js';
import { type Claim, type ClaimOptions, takeClaim } from './claim.js';
import { type DirSync, removeDurably } from './durable.js';
import { entryPrefix, type FileRead, fsyncFile, readRegular, renameFile } from './io.js';
import { type Journal, type JournalLine, nextRev } from './journal.js';
import type { KeyedQueue } from './keyed-queue.js';
import { fileNameFor, legacyFileNameFor, PENDING_SUFFIX } from './names.js';
import { OwnedStoreError, type OwnerState } from './owner.js';
import { ParsedRecords } from './parsed.js';
import type { PinnedRecords } from './pinned.js';
import type { Quarantine } from './quarantine.js';
import { aheadOf, type ReadAhead } from './read-ahead.js';
import { check, revOf } from './record-file.js';

export type { ReadAhead } from './read-ahead.js';

const MISSING: FileRead = { kind: 'missing' };

/** Inside `exclusive`: the directory's owner died; its journal is replayed before the task runs. */
const OWNER_DIED = Symbol('owner died');

/** Tells `exclusive` to take the claim again and redo the task (the claim was lost before committing). */
export const RETRY = Symbol('retry');

export interface RecordFilesContext {
  dir: string;
  records: DirSync;
  quarantine: Quarantine;
  journal: Journal;
  /** The record files this handle wrote last, kept open to be read back cheaply. */
  pinned: PinnedRecords;
  queue: KeyedQueue;
  claimOptions: ClaimOptions;
  /** Wall clock of revisions (`nextRev`): keeps them growing across restarts. */
  now: () => number;
  /** Revisions this handle removed records at: a record written again starts above them. */
  removedRevOf?: (name: string) => number | undefined;
  /** Tracks work so the handle's `close()` waits for it. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * A shared handle's view of the directory's owner (owner.ts): looked at
   * under every claim it takes; `settle` replays the journal of an owner
   * that died. Undefined for the owner itself.
   */
  owner?: { state(): OwnerState; settle(): Promise<void> } | undefined;
}

export class RecordFiles {
  /** Durable writes and removals requested (for `fileStoreStats`). */
  commits = 0;
  /** The records this handle validated last, by the text they came from (parsed.ts). */
  readonly parsed = new ParsedRecords();
  readonly #c: RecordFilesContext;
  /** The record directory as a prefix of its entries' paths (io.ts `entryPrefix`). */
  readonly #prefix: string;

  constructor(context: RecordFilesContext) {
    this.#c = context;
    this.#prefix = entryPrefix(context.dir);
  }

  /**
   * Runs `task` holding the record's claim: after earlier tasks of this
   * process on the same file, and with the cross-process claim file. A task
   * that finds the claim lost before committing returns RETRY and runs again.
   * The claim is released on every path, a throwing task included.
   *
   * Under the claim, before the task, a shared handle looks for an owner of
   * the directory (owner.ts): a live one stops it with `OwnedStoreError`; the
   * journal of a dead one is replayed first (its record files may be behind
   * it), without this claim, and the task runs after. Recovery's own writes
   * (`restore`, `resync`) skip the look (`checkOwner` false): they are that
   * replay, or the owner's.
   */
  exclusive<T>(name: string, task: (claim: Claim) => Promise<T | typeof RETRY>, checkOwner = true): Promise<T> {
    const { dir, queue, claimOptions, track } = this.#c;
    const claimPath = this.#prefix + name + PENDING_SUFFIX;
    const owner = checkOwner ? this.#c.owner : undefined;
    const held = (): Promise<T | typeof OWNER_DIED> =>
      queue.run(name, async () => {
        for (;;) {
          const claim = await takeClaim(claimPath, claimOptions);
          try {
            const found = owner?.state();
            if (found?.kind === 'live') throw new OwnedStoreError(dir, found.holder);
            if (found?.kind === 'dead') return OWNER_DIED;
            const result = await task(claim);
            if (result !== RETRY) return result;
          } finally {
            await claim.release();
          }
        }
      });
    return track(
      (async () => {
        for (;;) {
          const result = await held();
          if (result !== OWNER_DIED) return result;
          // Outside this record's queue: the replay writes records too, this one among them.
          await owner?.settle();
        }
      })(),
    );
  }

  /**
   * The text of record file `name`, read under its claim. Anything there
   * that is not a regular file is moved aside and reported first, so the
   * name is free for the next version.
   */
  async readLocked(name: string): Promise<string | undefined> {
    const found = this.#readFile(name);
    if (found.kind === 'odd') await this.#c.quarantine.move(name, found);
    return found.kind === 'text' ? found.text : undefined;
  }

  /** Moves the bad text of `name` aside (the caller holds its claim) and reports it. */
  quarantineText(name: string, text: string, problems: readonly string[]): Promise<void> {
    return this.#c.quarantine.move(name, { kind: 'text', text }, problems);
  }

  /** Takes the claim, looks again, and quarantines the file if it is still bad. The record if it is fine now. */
  readonly recheck = (name: string): Promise<OperationRecord | undefined> =>
    this.exclusive(name, async () => {
      const text = await this.readLocked(name);
      if (text === undefined) return undefined;
      const checked = this.parsed.check(name, text);
      if (checked.ok) return checked.record;
      await this.quarantineText(name, text, checked.problems);
      return undefined;
    });

  /**
   * What is at record `name`: from its pinned descriptor when it is still
   * that file (pinned.ts), else read. A record not there yet (the first
   * write of every operation looks twice) is told by `existsSync`, which
   * reports a missing file without the exception a failed `open` throws.
   */
  #readFile(name: string): FileRead {
    const pinned = this.#c.pinned.read(name);
    if (pinned !== undefined) return pinned;
    const path = this.#prefix + name;
    return fs.existsSync(path) ? readRegular(path) : MISSING;
  }

  /** Reads one record without a claim; a bad file (or not a file at all) is quarantined. */
  async read(name: string): Promise<OperationRecord | undefined> {
    const found = this.#readFile(name);
    if (found.kind === 'missing') return undefined;
    const checked = found.kind === 'text' ? this.parsed.check(name, found.text) : undefined;
    return checked?.ok ? checked.record : this.recheck(name);
  }

  /**
   * Moves the record of `key` from the name an older version gave it
   * (names.ts) to its current name, under the current name's claim; every
   * public operation on a key does this first. A copy left at the old name
   * while one exists at the new (a journal replay after a power cut can do
   * that) goes to the quarantine, not away. Resolves with the record it
   * moved, if any. Costs nothing for keys whose name never changed.
   */
  readonly adopt = async (key: string): Promise<OperationRecord | undefined> => {
    const { dir } = this.#c;
    const legacy = legacyFileNameFor(key);
    if (legacy === undefined || !fs.existsSync(join(dir, legacy))) return undefined;
    const name = fileNameFor(key);
    return this.exclusive(name, async () => {
      const found = readRegular(join(dir, legacy));
      if (found.kind === 'missing') return undefined;
      if (found.kind === 'odd' || fs.existsSync(join(dir, name))) {
        await this.#c.quarantine.move(legacy, found, found.kind === 'odd' ? undefined : ['superseded: stored again']);
        return undefined;
      }
      await renameFile(join(dir, legacy), join(dir, name));
      await this.#c.records.sync();
      const checked = check(name, found.text);
      return checked.ok ? checked.record : undefined;
    });
  };

  /**
   * An update runs `fn` first on the record as it is on disk, without the
   * claim. If `fn` returns that very record, so does the update, linearized
   * at the read: no claim is taken (the claim of a record another live
   * owner holds, or of one already ours, changes nothing). Otherwise the
   * update takes the claim and reads again; when the text is the same, the
   * change computed here stands (updaters are pure; see `Updater`), else
   * `fn` runs again on the new text. A throw or an unreadable file decides
   * nothing here: the locked path runs `fn` and handles it.
   */
  readAhead(name: string, fn: Updater): ReadAhead {
    // The text this handle pinned, taken without even a `stat`: a change computed from it stands only if
    // the read under the claim finds that very text, so only an `unchanged` answer needs the file checked.
    const pinned = this.#c.pinned.peek(name);
    if (pinned !== undefined) {
      const ahead = aheadOf(name, pinned, fn, this.#check);
      if (ahead.kind === 'change') return ahead;
    }
    const found = this.#readFile(name);
    if (found.kind === 'odd') return { kind: 'unknown' };
    return aheadOf(name, found.kind === 'text' ? found.text : undefined, fn, this.#check);
  }

  readonly #check = (name: string, text: string) => this.parsed.check(name, text);

  /**
   * Publishes `recordText` as the next revision after the file's
   * `currentText`, durable through the journal before it is renamed into
   * place; or, when `relaxed` and the journal allows it (journal.ts), with
   * its journal line only queued. The published file stays pinned, and
   * `written` (the record `recordText` holds, computed from the validated
   * record `written.from`) is kept as the record of its text (parsed.ts);
   * unless the record is final: an operation writes its record again within
   * moments while it runs, rarely once it has ended, and a finished one kept
   * here would only outlive its use (a pass over 100,000 operations would
   * hold the last 256 finished ones, long enough for the collector to move
   * them to the old generation).
   */
  async commit(
    name: string,
    recordText: string,
    currentText: string | undefined,
    claim: Claim,
    relaxed = false,
    written?: { record: OperationRecord; from: OperationRecord | undefined },
  ): Promise<boolean> {
    this.commits++;
    const { journal, pinned } = this.#c;
    // A record created again after its deletion goes above the removal, even within the same millisecond:
    // replay restores no line below a kept removal (recovery.ts).
    const currentRev =
      currentText === undefined
        ? (this.#c.removedRevOf?.(name) ?? 0)
        : (pinned.revOf(name, currentText) ?? revOf(currentText));
    const rev = nextRev(currentRev, this.#c.now());
    const text = claim.fileText(recordText, rev);
    const line: JournalLine = { n: name, r: rev, t: text };
    const running = written === undefined || !isTerminal(written.record.state);
    const committed = await claim.commit(
      this.#prefix + name,
      text,
      () =>
        relaxed && journal.appendRelaxed(line, currentText === undefined ? undefined : currentRev)
          ? undefined
          : journal.append(line),
      running ? (fd, stat) => pinned.pin(name, fd, text, rev, stat) : undefined,
      // The pin of the version being replaced, read under this claim: its file is still linked until the rename.
      () => pinned.release(name),
    );
    if (committed && written !== undefined) {
      if (running) this.parsed.remember(name, text, written.record, written.from);
      else this.parsed.forget(name);
    }
    return committed;
  }

  /**
   * Writes record `name`'s current version again, unchanged (same text, same
   * revision), into a new file, fsynced and renamed into place. For a record
   * whose fsync failed, whose data may never reach the disk whatever a later
   * fsync of that file says (checkpoint.ts, which fsyncs the directory
   * after). Nothing to do when it is gone (the directory fsync covers that).
   * A file that is not a valid record is an error: its pages may be what the
   * failed write-back left, and the segment's line may be the only good
   * copy, so the checkpoint must keep the segment for recovery to replay.
   */
  readonly resync = (name: string): Promise<void> =>
    this.exclusive(
      name,
      async (claim) => {
        const text = await this.readLocked(name);
        if (text === undefined) return undefined;
        if (!check(name, text).ok) throw new Error(`record file ${name} is not a valid record: not written again`);
        const { dir, pinned } = this.#c;
        const replaced = await claim.commit(join(dir, name), text, fsyncFile, undefined, () => pinned.release(name));
        return replaced ? undefined : RETRY;
      },
      false,
    );

  /** Recovery: puts a journal line back if the record file is missing, unreadable or older. */
  readonly restore = (line: JournalLine): Promise<boolean> =>
    this.exclusive(
      line.n,
      async (claim) => {
        const { dir, records } = this.#c;
        const text = await this.readLocked(line.n);
        const current = text !== undefined && check(line.n, text).ok ? revOf(text) : -1;
        if (line.r <= current) return false;
        if (line.t === undefined) return text !== undefined && removeDurably(records, line.n);
        // A line that does not hold a valid record is not restored over anything.
        if (!check(line.n, line.t).ok) return false;
        if (!(await claim.commit(join(dir, line.n), line.t, fsyncFile))) return RETRY;
        await records.sync();
        return true;
      },
      false,
    );
}
