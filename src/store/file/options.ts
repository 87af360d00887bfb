/**
 * The public options and type of the file store, their validation, and its
 * internal counters.
 */
import { resolve } from 'node:path';
import { InvalidOptionsError } from '../../errors.js';
import { type Runtime, systemRuntime } from '../../runtime.js';
import type { OperationStore } from '../store.js';
import type { ClaimOptions } from './claim.js';
import { type Machine, machineOf } from './machine.js';

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
   * Clock and timers of the store: its waits for another process's claim on
   * a record, record revisions, journal segment ages and checkpoints, claim
   * refreshes. Tests pass a fake runtime (`createFakeRuntime()` from
   * `oncely/testing`) to count those waits instead of timing them. (The
   * age of a file is judged by the clock that stamps file times, the
   * system's, whatever the runtime.)
   * @default the system's
   * @example fileStore({ dir, runtime: createFakeRuntime() })
   */
  runtime?: Partial<Runtime>;
  /**
   * How long an update waits for another (live) process holding the same
   * record before it rejects with a `LockTimeoutError` (`code`
   * `'lock_timeout'`). A hold lasts one write: milliseconds.
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
  /**
   * This handle alone owns the directory while it is open: a write is
   * durable with its journal line alone and its record file is written in
   * place a moment later (coalesced with the operation's next writes), so a
   * write takes no claim file and renames nothing. The fastest file store for one process. Every
   * other handle, in this process or another (a second exclusive one, a
   * shared one, the CLI), is kept out until it closes: an exclusive one
   * waits up to `lockTimeoutMs`, a shared one fails at once with
   * `OwnedStoreError` (`code` `'store_owned'`). A crashed owner is taken
   * over at once (one in another container once its claim stopped changing
   * for `staleLockMs`), after its journal is replayed. A relaxed write may be
   * lost by a process crash too, not only a power cut (docs/stores.md, "Durability,
   * step by step"). All processes using the directory must run an oncely
   * version that knows this option.
   * @default false (shared: processes write the same directory, one claim file per write)
   * @example fileStore({ dir: '.oncely', exclusive: true }) // one server process owns its outbox
   */
  exclusive?: boolean;
  /**
   * The machine as the store sees it: this process's host id, when the
   * machine booted, its boot id, whether a pid is alive, the clock of file
   * times (machine.ts). Each part left out is the system's. For tests and
   * sandboxes: a suite that must not depend on when its machine booted
   * injects the boot time; a claim whose holder cannot be alive (a file
   * older than the boot) is taken over at once.
   * @default the system's
   * @example fileStore({ dir, machine: { bootedAtMs: () => Date.now() - 60_000 } })
   */
  machine?: Partial<Machine>;
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
  /** Writes whose journal line was queued without waiting for its flush (relaxed). */
  relaxedLines: number;
  /** Reads of a record answered from its pinned descriptor (pinned.ts) instead of the file. */
  pinnedReads: number;
  /** Record texts answered from the records this handle validated last (parsed.ts) instead of a parse. */
  parsedHits: number;
  /** Record files written behind the journal (exclusive stores: write-behind.ts). */
  writtenBehind: number;
}

/** The counters of each file store (see `fileStoreStats`). */
export const statsOf = new WeakMap<FileStore, () => FileStoreStats>();

/** Internal: the counters of a file store. */
export function fileStoreStats(store: FileStore): FileStoreStats {
  const read = statsOf.get(store);
  if (read === undefined) throw new TypeError('not a file store');
  return read();
}

/** Each exclusive store's write-behind pass (see `writeBehindNow`). */
export const writeBehindOf = new WeakMap<FileStore, () => Promise<void>>();

/**
 * Internal (tests, benchmarks): writes an exclusive store's pending record
 * files now (write-behind.ts) instead of a moment later. Nothing to do for a
 * shared store.
 */
export function writeBehindNow(store: FileStore): Promise<void> {
  return writeBehindOf.get(store)?.() ?? Promise.resolve();
}

/** Options after validation and defaults. */
export interface ResolvedFileStoreOptions {
  dir: string;
  now: () => number;
  /** Clock (revisions, segment ages, listing intervals) and timers (checkpoints, claim refreshes). */
  runtime: Runtime;
  claimOptions: ClaimOptions;
  /** See `FileStoreOptions.exclusive`. */
  exclusive: boolean;
  /** See `FileStoreOptions.machine`. */
  machine: Machine;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionsError(name, 'must be a positive number of milliseconds');
  }
  return value;
}

/** Validates `options` (naming the bad field) and fills in the defaults. */
export function resolveFileStoreOptions(options: FileStoreOptions): ResolvedFileStoreOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  if (options.dir !== undefined && (typeof options.dir !== 'string' || options.dir.length === 0)) {
    throw new InvalidOptionsError('dir', 'must be a non-empty path');
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new InvalidOptionsError('now', 'must be a function');
  }
  if (options.exclusive !== undefined && typeof options.exclusive !== 'boolean') {
    throw new InvalidOptionsError('exclusive', 'must be true or false');
  }
  if (options.machine !== undefined && (typeof options.machine !== 'object' || options.machine === null)) {
    throw new InvalidOptionsError('machine', 'must be an object');
  }
  for (const [name, part] of Object.entries(options.machine ?? {})) {
    if (part !== undefined && typeof part !== 'function')
      throw new InvalidOptionsError(`machine.${name}`, 'must be a function');
  }
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const machine = machineOf(options.machine);
  return {
    dir: resolve(options.dir ?? '.oncely'),
    now: options.now ?? runtime.now,
    runtime,
    claimOptions: {
      timeoutMs: positive('lockTimeoutMs', options.lockTimeoutMs, 30_000),
      staleMs: positive('staleLockMs', options.staleLockMs, 10_000),
      runtime,
      machine,
    },
    exclusive: options.exclusive ?? false,
    machine,
  };
}
