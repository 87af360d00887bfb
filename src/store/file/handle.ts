/**
 * The parts of one open file store handle (directories, journal, pinned
 * records, record files), created on its first read or write and closed
 * together. store.ts composes them into the public operations.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { QuarantineEntry } from '../store.js';
import type { Claim } from './claim.js';
import { DirSync, makeDirectory } from './durable.js';
import { type Exclusive, OWNED_TRUST_MS, stillOwned } from './exclusive.js';
import { Journal } from './journal.js';
import { type KeyedQueue, queueFor } from './keyed-queue.js';
import type { ResolvedFileStoreOptions } from './options.js';
import { PinnedRecords } from './pinned.js';
import { Quarantine } from './quarantine.js';
import { RecordFiles, type RecordFilesContext } from './records.js';
import { RemovedRecords } from './removed.js';
import { randomToken } from './token.js';
import { WriteBehind } from './write-behind.js';

const QUARANTINE_DIR = 'quarantine';
const JOURNAL_DIR = 'journal';

export interface Opened {
  records: DirSync;
  quarantineDir: DirSync;
  quarantine: Quarantine;
  journal: Journal;
  pinned: PinnedRecords;
  queue: KeyedQueue;
  files: RecordFiles;
  /** Deleted records, kept aside until no journal line could bring them back. */
  removed: RemovedRecords;
  /** Dead writers' journals settled (replayed after a reboot): before the first read or write. */
  recovered: Promise<void> | undefined;
  /** An exclusive handle's parts (exclusive.ts); undefined for a shared one. */
  owned: Exclusive | undefined;
  /** An exclusive handle's owner claim (owner.ts), once taken. */
  owner: Claim | undefined;
}

/** Where a handle on `dir` keeps its quarantine and its journal. */
export function handlePaths(dir: string): { quarantinePath: string; journalDir: string } {
  return { quarantinePath: join(dir, QUARANTINE_DIR), journalDir: join(dir, JOURNAL_DIR) };
}

/** Creates the directories (synchronously: once per handle) and the parts of a handle on them. */
export function openHandle(
  options: ResolvedFileStoreOptions,
  listeners: Set<(entry: QuarantineEntry) => void>,
  track: <T>(work: Promise<T>) => Promise<T>,
  /** A shared handle's view of the directory's owner (records.ts); undefined for an exclusive handle. */
  owner?: RecordFilesContext['owner'],
): Opened {
  const { dir, now, runtime, claimOptions } = options;
  const { quarantinePath, journalDir } = handlePaths(dir);
  makeDirectory(dir);
  makeDirectory(quarantinePath);
  makeDirectory(journalDir);
  const records = new DirSync(dir);
  const quarantineDir = new DirSync(quarantinePath);
  const quarantine = new Quarantine(records, quarantineDir, now, listeners);
  const removed = new RemovedRecords(dir, journalDir, { machine: options.machine });
  const queue = queueFor(fs.realpathSync(dir));
  // `files` and `opened` are built below; the journal and `behind` call back into them only later.
  const behind: WriteBehind | undefined = options.exclusive
    ? new WriteBehind({
        dir,
        journalFlushed: (): Promise<void> => journal.flushed(),
        inQueue: (name, task) => queue.run(name, task),
        quarantineOdd: (name, found) => quarantine.move(name, found),
        owned: () => opened.owned !== undefined && stillOwned(opened, opened.owned),
        runtime,
      })
    : undefined;
  const journal: Journal = new Journal(new DirSync(journalDir), records, runtime, {
    removed,
    resync: (name): Promise<void> => files.resync(name),
    // Written, then the journal flushed: a version the pass skipped (replaced meanwhile) has its line durable
    // before this segment, which may hold the only durable copy of an older one, goes.
    behind:
      behind === undefined
        ? undefined
        : {
            beforeCheckpoint: async () => {
              await behind.flush();
              await journal.flushed();
            },
          },
    machine: options.machine,
  });
  const pinned = new PinnedRecords(dir);
  const files: RecordFiles = new RecordFiles({
    dir,
    records,
    quarantine,
    journal,
    pinned,
    queue,
    claimOptions,
    now: runtime.now,
    removedRevOf: (name) => removed.revisionOf(name),
    track,
    owner: options.exclusive ? undefined : owner,
  });
  const opened: Opened = {
    records,
    quarantineDir,
    quarantine,
    journal,
    pinned,
    queue,
    files,
    removed,
    recovered: undefined,
    owned:
      behind === undefined
        ? undefined
        : {
            behind,
            writer: { host: options.machine.hostId(), pid: process.pid, token: randomToken() },
            monotonicNow: runtime.monotonicNow,
            wallNow: runtime.now,
            trustMs: Math.min(OWNED_TRUST_MS, claimOptions.staleMs / 10),
            ownedAtMs: Number.NEGATIVE_INFINITY,
            ownedAtWallMs: Number.NEGATIVE_INFINITY,
          },
    owner: undefined,
  };
  return opened;
}

/** Closes every part of a handle, each even when closing another one failed. */
export async function closeHandle(opened: Opened): Promise<void> {
  const { recovered, journal, records, quarantineDir, pinned, removed, owned } = opened;
  try {
    await recovered?.catch(() => undefined);
    // An exclusive handle writes its files, then checkpoints them (the journal's close), before it lets anyone
    // else in. If its files could not all be written, it leaves its owner claim in place (`abandon`): the next
    // handle of this process takes it for a crashed owner's and replays its journal first; other processes see
    // a live owner until this one exits (then a dead one, replayed first), never files that are behind.
    let behindFailed = false;
    try {
      owned?.behind.cancel();
      if (opened.owner !== undefined) {
        await owned?.behind.flush().catch((error: unknown) => {
          behindFailed = true;
          process.emitWarning(`oncely: writing record files at close failed: ${String(error)}`);
        });
      }
      await journal.close();
    } finally {
      if (behindFailed || (owned?.behind.size ?? 0) > 0) opened.owner?.abandon();
      else await opened.owner?.release();
    }
  } finally {
    pinned.close();
    try {
      await records.close();
    } finally {
      try {
        await quarantineDir.close();
      } finally {
        await removed.close();
      }
    }
  }
}
