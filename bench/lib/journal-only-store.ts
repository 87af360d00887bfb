/**
 * Diagnostic for the overhead benchmark, not a store anyone should use: the
 * memory store, with every change also appended to a real file-store
 * journal (the store's own `Journal`: group commit, one `fdatasync` per
 * round) and no record files at all. A durable write waits for its line; a
 * relaxed write only queues it, as the file store's do.
 *
 * It measures the ceiling of the layout BENCHMARKS.md discusses for target
 * 3, records that live in the journal until a checkpoint: one durable
 * append before the first byte, no file created or renamed per write. It
 * leaves out what such a store would still need (the claim files that keep
 * two processes from writing one record at once, reads by other processes,
 * checkpoints), so the file store can only come near it, never pass it.
 */
import { join } from 'node:path';
import type { OperationRecord } from '../../src/model.js';
import { systemRuntime } from '../../src/runtime.js';
import { DirSync, makeDirectory } from '../../src/store/file/durable.js';
import { Journal, type JournalLine, nextRev } from '../../src/store/file/journal.js';
import { systemMachine } from '../../src/store/file/machine.js';
import { memoryStore } from '../../src/store/memory.js';
import type { OperationStore, Updater, WriteOptions } from '../../src/store/store.js';

export interface JournalOnlyStore extends OperationStore {
  /** Lines appended, and `fdatasync` rounds that made them durable. */
  stats(): { lines: number; relaxed: number; flushes: number };
  close(): Promise<void>;
}

export function journalOnlyStore(dir: string): JournalOnlyStore {
  const journalDir = join(dir, 'journal');
  makeDirectory(dir);
  makeDirectory(journalDir);
  const journal = new Journal(new DirSync(journalDir), new DirSync(dir), systemRuntime, { machine: systemMachine });
  const memory = memoryStore();
  const revs = new Map<string, number>();

  /** Appends `record` as its key's next revision: waited for unless the write is relaxed. */
  const log = async (record: OperationRecord, options: WriteOptions | undefined): Promise<void> => {
    const current = revs.get(record.key);
    const rev = nextRev(current ?? 0, Date.now());
    revs.set(record.key, rev);
    const line: JournalLine = { n: record.key, r: rev, t: JSON.stringify(record) };
    if (options?.durability === 'relaxed' && journal.appendRelaxed(line, current)) return;
    await journal.append(line);
  };

  return {
    ...memory,
    async put(record, options) {
      await memory.put(record, options);
      await log(record, options);
    },
    async update(key, fn: Updater, options) {
      let changed: OperationRecord | undefined;
      const stored = await memory.update(
        key,
        (current) => {
          const next = fn(current);
          changed = next === current ? undefined : next;
          return next;
        },
        options,
      );
      if (changed !== undefined) await log(changed, options);
      return stored;
    },
    stats: () => ({ lines: journal.stats.lines, relaxed: journal.stats.relaxed, flushes: journal.stats.flushes }),
    close: () => journal.close(),
  };
}
