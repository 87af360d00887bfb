/**
 * The file store (`oncely/node`): one JSON file per operation in a private
 * directory, safe against crashes and shared by processes.
 *
 * Layout of `dir` (0700; files 0600):
 *
 *   <name>.json           one record per key (names: see names.ts): the
 *                         record as one JSON line, then a line naming the
 *                         process that wrote it and the record's revision
 *   <name>.json.pending   an update in progress: the claim (lock) of the
 *                         record and the temp file of its next version, or
 *                         left by a crash (never read as a record; claim.md);
 *                         renamed over the record to commit: a write costs
 *                         two directory changes (this create, that rename)
 *   quarantine/<at>-<token>-<name>.json   records that failed validation
 *   removed/<rev>-<at>-<name>  deleted records, until no journal line older than
 *                         their deletion is left anywhere (removed.ts)
 *   journal/<host>-<pid>-<token>-b<boot>-t<ms>.<n>.log  write-ahead journal segments, one
 *                         writer each (journal.ts, recovery.ts)
 *
 * Guarantees, and where they come from:
 * - durable before resolve: the new version is written to the claim file,
 *   its journal line is flushed (one `fdatasync` for every write waiting at
 *   that moment: group commit), and only then is it renamed into place;
 *   record files are fsynced later, by checkpoints, and after a power cut
 *   the journal restores any that did not make it (journal.ts, recovery.ts);
 * - relaxed writes (`durability: 'relaxed'`) are the same, except that they
 *   resolve without waiting for their journal line's flush: the next
 *   durable write of this handle (or a timer) flushes it, and the journal
 *   refuses to relax a write that could cost an earlier durable version
 *   (journal.ts);
 * - the record files this handle wrote last stay open (pinned.ts), so
 *   reading one back costs one `stat` (an update's guess before the claim
 *   costs none: the read under the claim checks it);
 * - `update` is atomic across processes: within a process updates of a key
 *   queue up (keyed-queue.ts), then take the record's claim file (claim.ts);
 *   `fn` always sees the latest record on disk, read under the claim, so the
 *   engine's epoch fencing inside `fn` is sound;
 * - readers never take a lock: a rename replaces a file atomically, so a
 *   read sees a whole old or a whole new record;
 * - every read is validated with `parseRecord`, once per file text: a text
 *   this handle validated or wrote last is answered with its frozen record
 *   (parsed.ts), any other text is checked in full; a file that fails (torn,
 *   garbage, wrong key, or not a regular file at all: a FIFO, a directory)
 *   is moved to `quarantine/` under its claim (after a second look, so a
 *   record being rewritten is never moved), reported, and skipped; every
 *   other record keeps working. No read blocks on such a file (io.ts);
 * - every claim taken is released on every path (`exclusive`'s `finally`).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { OperationRecord } from '../../model.js';
import { packedListings } from '../packed-listing.js';
import { PackedSummaries } from '../packed-summaries.js';
import type { QuarantineEntry, RecordFilter, Updater, WriteOptions } from '../store.js';
import { summaryOf } from '../store.js';
import { assertOwned, deleteOwned, listOwned, putOwned, readOwned, updateOwned } from './exclusive.js';
import { closeHandle, handlePaths, type Opened, openHandle } from './handle.js';
import { nextRev } from './journal.js';
import { fileNameFor } from './names.js';
import { type FileStore, type FileStoreOptions, resolveFileStoreOptions, statsOf, writeBehindOf } from './options.js';
import { ownerGone as ownerGoneBefore, ownerOf, settleDeadOwner, takeDirectory } from './owner.js';
import { holds, revOf, serialize } from './record-file.js';
import { RETRY, type ReadAhead, type RecordFiles } from './records.js';
import { settleDeadJournals } from './recovery.js';
import { type ScanContext, scanPacked, scanRecords } from './scan.js';

export type { FileStore, FileStoreOptions, FileStoreStats } from './options.js';
export { fileStoreStats } from './options.js';

/** Listing also settles the journals of writers that died since, at most this often. */
const SETTLE_EVERY_MS = 30_000;

/**
 * A durable, crash-safe, multi-process store for Node.js.
 *
 * @example
 * import { createClient, fileStore } from 'oncely/node';
 * const client = createClient({ store: fileStore({ dir: '.oncely' }) });
 * await client.resume(); // finish what a previous run left in flight
 */
export function fileStore(options: FileStoreOptions = {}): FileStore {
  const resolved = resolveFileStoreOptions(options);
  const { dir, runtime, claimOptions, exclusive, machine } = resolved;
  const { quarantinePath, journalDir } = handlePaths(dir);
  const pending = new Set<Promise<unknown>>();
  const listeners = new Set<(entry: QuarantineEntry) => void>();
  let opened: Opened | undefined;
  let closed = false;
  /** When dead writers' journals were last settled (runtime's monotonic clock); `undefined`: never. */
  let settledAtMs: number | undefined;

  /** Creates the directories on first use (synchronously: once per store). */
  function open(): Opened {
    if (closed) throw new Error(`file store ${dir} is closed`);
    if (opened !== undefined) return opened;
    opened = openHandle(resolved, listeners, track, { state: () => ownerOf(journalDir, machine), settle: settleOwner });
    return opened;
  }

  /**
   * Runs `work` once the store is open and recovered (every public read and
   * write goes through here), tracked from the call on so `close()` waits
   * for it; throws at once on a closed store.
   */
  function whenReady<T>(work: (current: Opened) => Promise<T>): Promise<T> {
    const current = open();
    return track(
      // A shared handle looks for an owner before it settles anything (a settle would write over an owner's
      // files); an exclusive one makes sure it still owns the directory.
      (exclusive ? recovered(current) : ownerGone().then(() => recovered(current)))
        .then(() => {
          if (current.owned !== undefined) assertOwned(current, current.owned);
        })
        .then(() => work(current)),
    );
  }

  /** A shared handle, before each read or write (owner.ts `ownerGone`). */
  const ownerGone = (): Promise<void> => ownerGoneBefore(dir, journalDir, machine, settle);
  /** Replays a dead owner's journal and sweeps its claim (owner.ts `settleOwner`). */
  const settleOwner = (): Promise<void> => settleDeadOwner(dir, journalDir, machine, settle);

  /**
   * Settles dead writers' journals once per handle, before its first read or
   * write. A failure (say, another process's recovery outlasting
   * `lockTimeoutMs`) rejects the calls waiting for it, and the next call tries
   * again: a handle is never stuck on one bad moment.
   */
  function recovered(current: Opened): Promise<void> {
    current.recovered ??= (exclusive ? takeDirectory(current, dir, journalDir, claimOptions, settle) : settle()).catch(
      (error: unknown) => {
        current.recovered = undefined;
        throw error;
      },
    );
    return current.recovered;
  }

  /** Settles the journals of writers that are gone (recovery.ts). */
  async function settle(): Promise<void> {
    settledAtMs = runtime.monotonicNow();
    const { records, files, removed } = open();
    await settleDeadJournals({
      journalDir,
      records,
      claimOptions,
      restore: files.restore,
      resync: files.resync,
      removed,
      // Only while this handle holds the claim: one that lost it must not take the new owner's journal for dead.
      owner: () => exclusive && opened?.owner?.held() === true,
    });
  }

  /** Tracks work so `close()` can wait for it. */
  function track<T>(work: Promise<T>): Promise<T> {
    pending.add(work);
    const done = (): void => {
      pending.delete(work);
    };
    work.then(done, done);
    return work;
  }

  /** Lists through scan.ts, settling dead writers' journals first from time to time. */
  async function scan<T extends { key: string; nextAttemptAt: number; createdAt: number }>(
    files: RecordFiles,
    filter: RecordFilter | undefined,
    pick: (record: OperationRecord) => T,
  ): Promise<T[]> {
    return scanRecords(await scanContext(files), filter, pick);
  }

  /** What a scan needs, once dead writers' journals are settled (at most every `SETTLE_EVERY_MS`). */
  async function scanContext(files: RecordFiles): Promise<ScanContext> {
    if (settledAtMs === undefined || runtime.monotonicNow() - settledAtMs >= SETTLE_EVERY_MS) await settle();
    return { dir, machine, recheck: files.recheck, adopt: files.adopt };
  }

  const store: FileStore = {
    dir,

    pathOf(key) {
      return join(dir, fileNameFor(key));
    },

    async get(key) {
      return whenReady(async (current) => {
        await current.files.adopt(key);
        const name = fileNameFor(key);
        return current.owned === undefined ? current.files.read(name) : readOwned(current, current.owned, name);
      });
    },

    async put(record, options?: WriteOptions) {
      const name = fileNameFor(record.key);
      const { text, stored } = serialize(record);
      const relaxed = options?.durability === 'relaxed';
      await whenReady(async (current) => {
        const { files, owned } = current;
        await files.adopt(record.key);
        if (owned !== undefined) return putOwned(current, owned, record, options, runtime.now);
        await files.exclusive(name, async (claim) =>
          (await files.commit(name, text, await files.readLocked(name), claim, relaxed, {
            record: stored,
            from: undefined,
          }))
            ? undefined
            : RETRY,
        );
      });
    },

    async update(key: string, fn: Updater, options?: WriteOptions) {
      const relaxed = options?.durability === 'relaxed';
      const name = fileNameFor(key);
      return whenReady(async (current) => {
        const { files, queue, owned } = current;
        await files.adopt(key);
        if (owned !== undefined) return updateOwned(current, owned, key, fn, options, runtime.now);
        const ahead: ReadAhead = queue.busy(name) ? { kind: 'unknown' } : files.readAhead(name, fn);
        if (ahead.kind === 'unchanged') return ahead.record;
        return files.exclusive(name, async (claim) => {
          const text = await files.readLocked(name);
          let next: OperationRecord | undefined;
          let current: OperationRecord | undefined;
          if (ahead.kind === 'change' && text === ahead.text) {
            next = ahead.next;
            current = ahead.current;
          } else {
            if (text !== undefined) {
              const checked = files.parsed.check(name, text);
              if (checked.ok) current = checked.record;
              else await files.quarantineText(name, text, checked.problems);
            }
            next = fn(current);
            if (next === current || next === undefined) return current;
          }
          if (next.key !== key) throw new TypeError(`update of ${key} returned a record for ${next.key}`);
          const { text: nextText, stored } = serialize(next, current);
          const written = { record: stored, from: current };
          return (await files.commit(name, nextText, text, claim, relaxed, written)) ? stored : RETRY;
        });
      });
    },

    async delete(key, options) {
      const name = fileNameFor(key);
      await whenReady(async (current) => {
        const { files, journal, pinned, removed, owned } = current;
        await files.adopt(key);
        if (owned !== undefined) return deleteOwned(current, owned, key, runtime.now, options?.onlyIf);
        await files.exclusive(name, async () => {
          const text = await files.readLocked(name);
          // Read under this claim: its file is still linked, so its pin is closed at once (pinned.ts).
          pinned.release(name);
          if (text === undefined || !holds(name, text, options?.onlyIf)) return undefined;
          files.commits++;
          // The removal is journaled first, so a replay after a power cut does not bring the record back;
          // the file is kept aside, so neither does an older line another writer's journal still holds.
          const rev = nextRev(revOf(text), runtime.now());
          await journal.append({ n: name, r: rev, d: 1 });
          await removed.moveAside(name, rev);
          files.parsed.forget(name);
          return undefined;
        });
      });
    },

    list(filter?: RecordFilter) {
      return whenReady(({ files, owned }) => {
        const pick = (record: OperationRecord) => record;
        if (owned === undefined) return scan(files, filter, pick);
        return listOwned(owned, filter, pick, (unlimited, picked) => scan(files, unlimited, picked));
      });
    },

    listSummaries(filter?: RecordFilter) {
      return whenReady(({ files, owned }) => {
        if (owned === undefined) return scan(files, filter, summaryOf);
        return listOwned(owned, filter, summaryOf, (unlimited, picked) => scan(files, unlimited, picked));
      });
    },

    async quarantined() {
      return whenReady(async ({ quarantine }) => quarantine.list(await fs.promises.readdir(quarantinePath)));
    },

    onQuarantine(fn) {
      listeners.add(fn);
      return () => {
        listeners.delete(fn);
      };
    },

    async close() {
      if (closed) return;
      while (pending.size > 0) await Promise.allSettled([...pending]);
      closed = true;
      if (opened === undefined) return;
      await closeHandle(opened);
    },
  };
  statsOf.set(store, () => ({
    commits: opened?.files.commits ?? 0,
    journalLines: opened?.journal.stats.lines ?? 0,
    journalFlushes: opened?.journal.stats.flushes ?? 0,
    checkpoints: opened?.journal.stats.checkpoints ?? 0,
    relaxedLines: opened?.journal.stats.relaxed ?? 0,
    pinnedReads: opened?.pinned.hits ?? 0,
    parsedHits: opened?.files.parsed.hits ?? 0,
    writtenBehind: opened?.owned?.behind.written ?? 0,
  }));
  writeBehindOf.set(store, () => opened?.owned?.behind.flush() ?? Promise.resolve());
  // `listSummaries` packed as the records are read (resume passes: packed-summaries.ts). An exclusive handle
  // lists through the versions it holds written behind (exclusive.ts), and packs that list afterwards.
  packedListings.set(store, (filter) =>
    whenReady(async ({ files, owned }) => {
      if (owned === undefined) return scanPacked(await scanContext(files), filter);
      const listed = await listOwned(owned, filter, summaryOf, (unlimited, picked) => scan(files, unlimited, picked));
      return PackedSummaries.of(listed);
    }),
  );
  return store;
}
