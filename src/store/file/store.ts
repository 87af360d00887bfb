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
 *                         left by a crash (never read as a record)
 *   quarantine/<at>-<token>-<name>.json   records that failed validation
 *   journal/<host>-<pid>-<token>.<n>.log  write-ahead journal segments, one
 *                         writer each (journal.ts, recovery.ts)
 *
 * Guarantees, and where they come from:
 * - durable before resolve: the new version is written to the claim file,
 *   its journal line is flushed (one `fdatasync` for every write waiting at
 *   that moment: group commit), and only then is it renamed into place;
 *   record files are fsynced later, by checkpoints, and after a power cut
 *   the journal restores any that did not make it (journal.ts, recovery.ts);
 * - `update` is atomic across processes: within a process updates of a key
 *   queue up (keyed-queue.ts), then take the record's claim file (claim.ts);
 *   `fn` always sees the latest record on disk, read under the claim, so the
 *   engine's epoch fencing inside `fn` is sound;
 * - readers never take a lock: a rename replaces a file atomically, so a
 *   read sees a whole old or a whole new record;
 * - every read is validated with `parseRecord`; a file that fails (torn,
 *   garbage, wrong key) is moved to `quarantine/` under its claim (after a
 *   second look, so a record being rewritten is never moved), reported, and
 *   skipped; every other record keeps working.
 */
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidOptionsError } from '../../errors.js';
import type { OperationRecord } from '../../flow/record.js';
import { writeOrder } from '../../flow/record.js';
import { type Runtime, systemRuntime } from '../../runtime.js';
import type { OperationStore, QuarantineEntry, RecordFilter, Updater } from '../store.js';
import { summaryOf } from '../store.js';
import { type Claim, type ClaimOptions, sweepBroken, sweepClaim, takeClaim } from './claim.js';
import { DirSync, makeDirectory, moveDurably, removeDurably } from './durable.js';
import { fsyncFile, isErrno, unlinkFile } from './io.js';
import { Journal, type JournalLine, nextRev } from './journal.js';
import { queueFor } from './keyed-queue.js';
import { randomToken } from './liveness.js';
import { fileNameFor, PENDING_SUFFIX, parseFileName } from './names.js';
import { check, idOf, revOf, serialize } from './record-file.js';
import { settleDeadJournals } from './recovery.js';

export interface FileStoreOptions {
  /**
   * Directory of the store; created with mode 0700 when missing (an existing
   * directory's mode is left alone). Give each application its own.
   * @default '.oncely' under the current working directory
   * @example fileStore({ dir: path.join(os.homedir(), '.my-app', 'outbox') })
   */
  dir?: string;
  /** Clock for quarantine timestamps. @default runtime.now */
  now?: () => number;
  /**
   * Clock and timers of the store's own waits (for another process's claim
   * on a record). Tests pass a fake runtime (`createFakeRuntime()` from
   * `oncely/testing`) to count those waits instead of timing them.
   * @default the system's
   */
  runtime?: Partial<Runtime>;
  /**
   * How long an update waits for another (live) process holding the same
   * record before it rejects with a `LockTimeoutError` (`code`
   * `'ELOCKTIMEOUT'`). A hold lasts one write: milliseconds.
   * @default 30_000
   */
  lockTimeoutMs?: number;
  /**
   * A claim whose holder cannot be checked (a process on another host
   * sharing the directory, a recycled pid) is taken over once it stayed
   * unchanged this long; live holders refresh theirs every third of it. A
   * holder that died on this host is taken over at once. Keep it below
   * `lockTimeoutMs`.
   * @default 10_000
   */
  staleLockMs?: number;
}

export interface FileStore extends OperationStore {
  /** The store directory, absolute. */
  readonly dir: string;
  /** The file that holds (or would hold) the record of `key`. */
  pathOf(key: string): string;
  /** Waits for this handle's pending writes, then releases its directory handles. */
  close(): Promise<void>;
}

/** Counters for benchmarks and diagnostics (not part of the public API). */
export interface FileStoreStats {
  /** Durable writes and removals requested. */
  commits: number;
  /** Journal lines made durable. */
  journalLines: number;
  /** Journal `fdatasync` calls (lower than `journalLines` when group commit batches). */
  journalFlushes: number;
  /** Journal segments checkpointed. */
  checkpoints: number;
}

const statsOf = new WeakMap<FileStore, () => FileStoreStats>();

/** Internal: the counters of a file store. */
export function fileStoreStats(store: FileStore): FileStoreStats {
  const read = statsOf.get(store);
  if (read === undefined) throw new TypeError('not a file store');
  return read();
}

const QUARANTINE_DIR = 'quarantine';
const JOURNAL_DIR = 'journal';
/** Listing also settles the journals of writers that died since, at most this often. */
const SETTLE_EVERY_MS = 30_000;
/** `list()` yields to the event loop after this many files (reads are synchronous: faster than the thread pool). */
const LIST_YIELD_EVERY = 256;

/** What an update's `fn` made of the record read without the claim (see `readAhead`). */
type ReadAhead =
  | { kind: 'unchanged'; record: OperationRecord | undefined }
  | { kind: 'change'; text: string | undefined; next: OperationRecord }
  | { kind: 'unknown' };

/** Tells `exclusive` to take the lock again and redo the task (the lock was lost before committing). */
const RETRY = Symbol('retry');

interface Opened {
  records: DirSync;
  quarantine: DirSync;
  journal: Journal;
  queue: ReturnType<typeof queueFor>;
  /** Dead writers' journals settled (replayed after a reboot): before the first read or write. */
  recovered: Promise<void> | undefined;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionsError(name, 'must be a positive number of milliseconds');
  }
  return value;
}

/**
 * A durable, crash-safe, multi-process store for Node.js.
 *
 * @example
 * import { createClient, fileStore } from 'oncely/node';
 * const client = createClient({ store: fileStore({ dir: '.oncely' }) });
 * await client.resume(); // finish what a previous run left in flight
 */
export function fileStore(options: FileStoreOptions = {}): FileStore {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  if (options.dir !== undefined && (typeof options.dir !== 'string' || options.dir.length === 0)) {
    throw new InvalidOptionsError('dir', 'must be a non-empty path');
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new InvalidOptionsError('now', 'must be a function');
  }
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const now = options.now ?? runtime.now;
  const claimOptions: ClaimOptions = {
    timeoutMs: positive('lockTimeoutMs', options.lockTimeoutMs, 30_000),
    staleMs: positive('staleLockMs', options.staleLockMs, 10_000),
    runtime,
  };
  const dir = resolve(options.dir ?? '.oncely');
  const quarantineDir = join(dir, QUARANTINE_DIR);
  const journalDir = join(dir, JOURNAL_DIR);
  const listeners = new Set<(entry: QuarantineEntry) => void>();
  const pending = new Set<Promise<unknown>>();
  let opened: Opened | undefined;
  let closed = false;
  let commits = 0;
  let settledAt = 0;

  /** Creates the directories on first use (synchronously: once per store). */
  function open(): Opened {
    if (closed) throw new Error(`file store ${dir} is closed`);
    if (opened !== undefined) return opened;
    makeDirectory(dir);
    makeDirectory(quarantineDir);
    makeDirectory(journalDir);
    const records = new DirSync(dir);
    opened = {
      records,
      quarantine: new DirSync(quarantineDir),
      journal: new Journal(new DirSync(journalDir), records),
      queue: queueFor(fs.realpathSync(dir)),
      recovered: undefined,
    };
    return opened;
  }

  /**
   * Runs `work` once the store is open and recovered (every public read and
   * write goes through here), tracked from the call on so `close()` waits
   * for it; throws at once on a closed store.
   */
  function whenReady<T>(work: (current: Opened) => Promise<T>): Promise<T> {
    const current = open();
    return track(recovered(current).then(() => work(current)));
  }

  /**
   * Settles dead writers' journals once per handle, before its first read or
   * write. A failure (say, another process's recovery outlasting
   * `lockTimeoutMs`) rejects the calls waiting for it, and the next call tries
   * again: a handle is never stuck on one bad moment.
   */
  function recovered(current: Opened): Promise<void> {
    current.recovered ??= settle().catch((error: unknown) => {
      current.recovered = undefined;
      throw error;
    });
    return current.recovered;
  }

  /** Settles the journals of writers that are gone (recovery.ts). */
  async function settle(): Promise<void> {
    settledAt = Date.now();
    await settleDeadJournals({ journalDir, records: open().records, claimOptions, restore });
  }

  /** Recovery: puts a journal line back if the record file is missing, unreadable or older. */
  function restore(line: JournalLine): Promise<boolean> {
    return exclusive(line.n, async (claim) => {
      const text = readText(line.n);
      const current = text !== undefined && check(line.n, text).ok ? revOf(text) : -1;
      if (line.r <= current) return false;
      const { records } = open();
      if (line.t === undefined) return text !== undefined && removeDurably(records, line.n);
      // A line that does not hold a valid record is not restored over anything.
      if (!check(line.n, line.t).ok) return false;
      if (!(await claim.commit(join(dir, line.n), line.t, fsyncFile))) return RETRY;
      await records.sync();
      return true;
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

  /**
   * Runs `task` holding the record's claim: after earlier tasks of this
   * process on the same file, and with the cross-process claim file. A task
   * that finds the claim lost before committing returns RETRY and runs again.
   */
  function exclusive<T>(name: string, task: (claim: Claim) => Promise<T | typeof RETRY>): Promise<T> {
    const { queue } = open();
    const pendingPath = join(dir, name + PENDING_SUFFIX);
    return track(
      queue.run(name, async () => {
        for (;;) {
          const claim = await takeClaim(pendingPath, claimOptions);
          try {
            const result = await task(claim);
            if (result !== RETRY) return result;
          } finally {
            await claim.release();
          }
        }
      }),
    );
  }

  function readText(name: string): string | undefined {
    try {
      return fs.readFileSync(join(dir, name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  function notify(entry: QuarantineEntry): void {
    for (const listener of [...listeners]) {
      try {
        listener(entry);
      } catch (error) {
        // A failing report must not break the store for every other record.
        process.emitWarning(`oncely: an onQuarantine listener threw: ${String(error)}`);
      }
    }
  }

  /** Moves the file aside (caller holds its claim) and reports it. */
  async function quarantineLocked(name: string, text: string, problems: readonly string[]): Promise<void> {
    const { records, quarantine } = open();
    const at = now();
    if (!(await moveDurably(records, name, quarantine, `${at}-${randomToken()}-${name}`))) return;
    notify({ id: idOf(name, text), problems, at, raw: text });
  }

  /** Takes the claim, looks again, and quarantines the file if it is still bad. Returns the record if it is fine now. */
  function quarantineChecked(name: string): Promise<OperationRecord | undefined> {
    return exclusive(name, async () => {
      const text = readText(name);
      if (text === undefined) return undefined;
      const checked = check(name, text);
      if (checked.ok) return checked.record;
      await quarantineLocked(name, text, checked.problems);
      return undefined;
    });
  }

  /** Reads one record without a lock; a bad file is quarantined. */
  async function readRecord(name: string): Promise<OperationRecord | undefined> {
    const text = readText(name);
    if (text === undefined) return undefined;
    const checked = check(name, text);
    return checked.ok ? checked.record : quarantineChecked(name);
  }

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
  function readAhead(name: string, fn: Updater): ReadAhead {
    const text = readText(name);
    let current: OperationRecord | undefined;
    if (text !== undefined) {
      const checked = check(name, text);
      if (!checked.ok) return { kind: 'unknown' };
      current = checked.record;
    }
    try {
      const next = fn(current);
      if (next === current || next === undefined) return { kind: 'unchanged', record: current };
      return { kind: 'change', text, next };
    } catch {
      return { kind: 'unknown' };
    }
  }

  /** Publishes `recordText` as the next revision after the file's `currentText`, durable through the journal. */
  function commit(name: string, recordText: string, currentText: string | undefined, claim: Claim): Promise<boolean> {
    commits++;
    const { journal } = open();
    const rev = nextRev(currentText === undefined ? 0 : revOf(currentText), Date.now());
    const text = claim.fileText(recordText, rev);
    return claim.commit(join(dir, name), text, () => journal.append({ n: name, r: rev, t: text }));
  }

  /**
   * Reads every record file (validating each, quarantining a corrupt one),
   * keeps `pick` of those that pass `filter`, earliest `nextAttemptAt` first.
   * Holds only what it returns (at most ~2×limit with a limit), so
   * `listSummaries` over 100k records never holds 100k whole records.
   */
  async function scan<T extends Ordered>(
    filter: RecordFilter | undefined,
    pick: (record: OperationRecord) => T,
  ): Promise<T[]> {
    if (Date.now() - settledAt >= SETTLE_EVERY_MS) await settle();
    const names = await fs.promises.readdir(dir);
    const states = filter?.state === undefined ? undefined : ([] as string[]).concat(filter.state);
    const matches = (record: OperationRecord): boolean =>
      (states === undefined || states.includes(record.state)) &&
      (filter?.dueBy === undefined || record.nextAttemptAt <= filter.dueBy) &&
      (filter?.scope === undefined || record.scope === filter.scope);
    const limit = filter?.limit;
    let selected: T[] = [];
    const corrupt: string[] = [];
    let seen = 0;
    for (const name of names) {
      if (++seen % LIST_YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      const kind = parseFileName(name).kind;
      // Crash debris: claims of dead processes, and takeovers that died half-way.
      if (kind === 'pending') sweepClaim(join(dir, name));
      if (kind === 'broken') sweepBroken(join(dir, name), claimOptions.staleMs);
      if (kind !== 'record' && kind !== 'hashed') continue;
      const text = readText(name);
      if (text === undefined) continue;
      const checked = check(name, text);
      if (!checked.ok) {
        corrupt.push(name);
        continue;
      }
      // Filter as we go and keep at most ~2×limit: a list of 100k records holds only what it returns.
      if (!matches(checked.record)) continue;
      selected.push(pick(checked.record));
      if (limit !== undefined && selected.length >= 2 * limit + 64) selected = earliestFirst(selected, limit);
    }
    for (const name of corrupt) {
      const record = await quarantineChecked(name);
      if (record !== undefined && matches(record)) selected.push(pick(record));
    }
    return earliestFirst(selected, limit);
  }

  const store: FileStore = {
    dir,

    pathOf(key) {
      return join(dir, fileNameFor(key));
    },

    async get(key) {
      return whenReady(() => readRecord(fileNameFor(key)));
    },

    async put(record) {
      const name = fileNameFor(record.key);
      const { text } = serialize(record);
      await whenReady(() =>
        exclusive(name, async (claim) => ((await commit(name, text, readText(name), claim)) ? undefined : RETRY)),
      );
    },

    async update(key: string, fn: Updater) {
      const name = fileNameFor(key);
      return whenReady(({ queue }) => {
        const ahead: ReadAhead = queue.busy(name) ? { kind: 'unknown' } : readAhead(name, fn);
        if (ahead.kind === 'unchanged') return Promise.resolve(ahead.record);
        return exclusive(name, async (claim) => {
          const text = readText(name);
          let next: OperationRecord | undefined;
          let current: OperationRecord | undefined;
          if (ahead.kind === 'change' && text === ahead.text) {
            next = ahead.next;
          } else {
            if (text !== undefined) {
              const checked = check(name, text);
              if (checked.ok) current = checked.record;
              else await quarantineLocked(name, text, checked.problems);
            }
            next = fn(current);
            if (next === current || next === undefined) return current;
          }
          if (next.key !== key) throw new TypeError(`update of ${key} returned a record for ${next.key}`);
          const { text: nextText, stored } = serialize(next);
          return (await commit(name, nextText, text, claim)) ? stored : RETRY;
        });
      });
    },

    async delete(key) {
      const name = fileNameFor(key);
      await whenReady(({ journal }) =>
        exclusive(name, async () => {
          const text = readText(name);
          if (text === undefined) return undefined;
          commits++;
          // The removal is journaled first, so a replay after a power cut does not bring the record back.
          await journal.append({ n: name, r: nextRev(revOf(text), Date.now()), d: 1 });
          await unlinkFile(join(dir, name)).catch((error: unknown) => {
            if (!isErrno(error, 'ENOENT')) throw error;
          });
          return undefined;
        }),
      );
    },

    list(filter?: RecordFilter) {
      return whenReady(() => scan(filter, (record) => record));
    },

    listSummaries(filter?: RecordFilter) {
      return whenReady(() => scan(filter, summaryOf));
    },

    async quarantined() {
      await whenReady(async () => undefined);
      const entries: QuarantineEntry[] = [];
      for (const file of await fs.promises.readdir(quarantineDir)) {
        const match = /^(\d+)-[0-9a-f]+-(.+)$/.exec(file);
        if (match === null) continue;
        const [, at, name = ''] = match;
        let raw: string;
        try {
          raw = fs.readFileSync(join(quarantineDir, file), 'utf8');
        } catch {
          continue;
        }
        const checked = check(name, raw);
        const problems = checked.ok ? ['passes validation now (quarantined by another version?)'] : checked.problems;
        entries.push({ id: idOf(name, raw), problems, at: Number(at), raw });
      }
      return entries.sort((a, b) => a.at - b.at);
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
      if (opened !== undefined) {
        await opened.recovered?.catch(() => undefined);
        await opened.journal.close();
        await opened.records.close();
        await opened.quarantine.close();
      }
    },
  };
  statsOf.set(store, () => ({
    commits,
    journalLines: opened?.journal.stats.lines ?? 0,
    journalFlushes: opened?.journal.stats.flushes ?? 0,
    checkpoints: opened?.journal.stats.checkpoints ?? 0,
  }));
  return store;
}

/** What `scan` sorts by. */
interface Ordered {
  nextAttemptAt: number;
  createdAt: number;
  seq?: number | undefined;
}

/** Earliest `nextAttemptAt` first (then oldest), at most `limit` (the order of `applyFilter`). */
function earliestFirst<T extends Ordered>(items: T[], limit: number | undefined): T[] {
  items.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || writeOrder(a) - writeOrder(b));
  return limit === undefined ? items : items.slice(0, limit);
}
