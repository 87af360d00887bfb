/**
 * `list()` of the file store: one pass over the record directory that reads
 * and validates every record file, sweeps crash debris on the way, and
 * keeps only what it returns.
 */

import * as fs from 'node:fs';
import type { OperationRecord } from '../../model.js';
import { writeOrder } from '../../model.js';
import { PackedStrings } from '../packed-strings.js';
import { PackedSummaries } from '../packed-summaries.js';
import type { RecordFilter } from '../store.js';
import { sweepBroken, sweepClaim, sweepNewClaim } from './claim.js';
import { entryPrefix, readRegular } from './io.js';
import type { Machine } from './machine.js';
import { parseFileName } from './names.js';
import { check } from './record-file.js';

/** `list()` yields to the event loop after this many files (reads are synchronous: faster than the thread pool). */
const LIST_YIELD_EVERY = 256;

export interface ScanContext {
  dir: string;
  /** Judges the claims crashes left behind, swept on the way (machine.ts). */
  machine: Machine;
  /** Looks again under the claim, quarantining the file if still bad: the record if it is fine now. */
  recheck(name: string): Promise<OperationRecord | undefined>;
  /** Moves the record of `key` from the name an older version gave it to its current one, and reads it. */
  adopt(key: string): Promise<OperationRecord | undefined>;
}

/** What `scan` sorts by. */
interface Ordered {
  key: string;
  nextAttemptAt: number;
  createdAt: number;
  seq?: number | undefined;
}

/**
 * Reads every record file (validating each, quarantining a corrupt one or
 * anything that is not a regular file), keeps `pick` of those that pass
 * `filter`, earliest `nextAttemptAt` first. Holds only what it returns (at
 * most ~2×limit with a limit), so `listSummaries` over 100k records never
 * holds 100k whole records.
 */
export async function scanRecords<T extends Ordered>(
  context: ScanContext,
  filter: RecordFilter | undefined,
  pick: (record: OperationRecord) => T,
): Promise<T[]> {
  const limit = filter?.limit;
  let selected: T[] = [];
  await walkRecords(context, filter, (record) => {
    selected.push(pick(record));
    // Keep at most ~2×limit: a list of 100k records holds only what it returns.
    if (limit !== undefined && selected.length >= 2 * limit + 64) selected = earliestFirst(selected, limit);
  });
  return earliestFirst(selected, limit);
}

/**
 * `scanRecords` without a limit, into packed summaries (unordered: see
 * `PackedSummaries.earliestFirst`): what a resume pass lists, holding a few
 * MB of buffers for 100k records instead of 100k summary objects on the heap.
 */
export async function scanPacked(context: ScanContext, filter: Omit<RecordFilter, 'limit'>): Promise<PackedSummaries> {
  const packed = new PackedSummaries();
  await walkRecords(context, filter, (record) => packed.add(record));
  return packed;
}

/**
 * Reads every record file, validating each (a corrupt one, or anything that
 * is not a regular file, is looked at again under its claim and quarantined
 * if still bad), sweeps crash debris on the way, and hands each valid record
 * that passes `filter` to `visit`, keeping none of them.
 */
async function walkRecords(
  context: ScanContext,
  filter: Omit<RecordFilter, 'limit'> | undefined,
  visit: (record: OperationRecord) => void,
): Promise<void> {
  const { dir, machine } = context;
  const states = filter?.state === undefined ? undefined : ([] as string[]).concat(filter.state);
  const matches = (record: OperationRecord): boolean =>
    (states === undefined || states.includes(record.state)) &&
    (filter?.dueBy === undefined || record.nextAttemptAt <= filter.dueBy) &&
    (filter?.scope === undefined || record.scope === filter.scope);
  const corrupt: string[] = [];
  const legacy: string[] = [];
  // The names are read in one go, not a batch at a time between the reads of the records: on some file
  // systems (btrfs) a record renamed into place moves to the end of the directory, so a scan that spans the
  // writes of its own process could miss a record that existed throughout, or list it twice. They are
  // packed at once (~7 MB of heap strings at 100k records, ~4 MB of buffers packed; see packed-strings.ts).
  const names = PackedStrings.of(await fs.promises.readdir(dir));
  const prefix = entryPrefix(dir);
  for (let i = 0; i < names.length; i++) {
    if ((i + 1) % LIST_YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    const name = names.at(i) as string;
    const parsed = parseFileName(name);
    const path = prefix + name;
    // Crash debris: claims of dead processes, claims half-created, takeovers that died half-way.
    if (parsed.kind === 'pending') sweepClaim(path, machine);
    if (parsed.kind === 'new-claim') sweepNewClaim(path, machine);
    if (parsed.kind === 'broken') sweepBroken(path, machine);
    if (parsed.kind === 'record' && parsed.legacy) {
      legacy.push(parsed.key);
      continue;
    }
    if (parsed.kind !== 'record' && parsed.kind !== 'hashed') continue;
    const read = readRegular(path);
    if (read.kind === 'missing') continue;
    const checked = read.kind === 'text' ? check(name, read.text) : undefined;
    if (checked === undefined || !checked.ok) {
      corrupt.push(name);
      continue;
    }
    if (matches(checked.record)) visit(checked.record);
  }
  for (const name of corrupt) {
    const record = await context.recheck(name);
    if (record !== undefined && matches(record)) visit(record);
  }
  for (const key of legacy) {
    const record = await context.adopt(key);
    if (record !== undefined && matches(record)) visit(record);
  }
}

/**
 * Earliest `nextAttemptAt` first (then oldest), at most `limit` (the order of
 * `applyFilter`); ties by key, so the order does not depend on the order the
 * directory lists its entries in (which differs between file systems).
 */
export function earliestFirst<T extends Ordered>(items: T[], limit: number | undefined): T[] {
  items.sort(
    (a, b) =>
      a.nextAttemptAt - b.nextAttemptAt ||
      writeOrder(a) - writeOrder(b) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  return limit === undefined ? items : items.slice(0, limit);
}
