/**
 * The reads and writes of an exclusive file store (`fileStore({ exclusive:
 * true })`): one process owns the directory (owner.ts), so a write needs no
 * claim file and no rename. It is durable once its journal line is (group
 * commit: journal.ts), and its record file is written a moment later,
 * coalesced with the operation's next writes (write-behind.ts). Per write:
 * one journal line, no directory change; per record, one file write per
 * `delayMs` at most, in the background.
 *
 * Same guarantees as a shared store otherwise: durable before resolve (or
 * relaxed: queued, and flushed within the journal's timer), `update`
 * atomic (updates of one record queue up in this process, and no other
 * process writes), every read validated, bad files quarantined.
 */
import type { OperationRecord } from '../../model.js';
import { applyFilter, type RecordFilter, type Updater, type WriteOptions } from '../store.js';
import type { HolderInfo } from './claim-files.js';
import { writeSteps } from './durable.js';
import type { Opened } from './handle.js';
import { type JournalLine, nextRev } from './journal.js';
import { fileNameFor } from './names.js';
import { OwnedStoreError } from './owner.js';
import { check, revOf, serialize } from './record-file.js';
import { earliestFirst } from './scan.js';
import type { Behind, WriteBehind } from './write-behind.js';

/** What an exclusive handle adds to an open handle. */
export interface Exclusive {
  behind: WriteBehind;
  /** This handle, as the writer line of its files names it (claim-files.ts `HolderInfo`). */
  writer: HolderInfo;
  /** The runtime's clocks: how often a call looks at the owner claim (`stillOwned`). */
  monotonicNow: () => number;
  wallNow: () => number;
  /** How long a look at the owner claim is trusted: `min(OWNED_TRUST_MS, staleLockMs / 10)`. */
  trustMs: number;
  /** When a call last found the owner claim still ours, on both clocks. */
  ownedAtMs: number;
  ownedAtWallMs: number;
}

/**
 * How long a call trusts its last look at the owner claim, at most. The
 * claim can only be taken from a live owner that left it unchanged for
 * `staleLockMs` (10 s by default; it refreshes it every third of that):
 * an owner that was frozen that long finds, on its first call after, that
 * more than this has passed, and looks. Both clocks must agree: the
 * monotonic one stops while a machine sleeps, the wall clock can be set.
 */
export const OWNED_TRUST_MS = 1_000;

/** Whether this handle still holds its owner claim: a `stat` at most once per `trustMs`. */
export function stillOwned(opened: Opened, owned: Exclusive): boolean {
  const nowMs = owned.monotonicNow();
  const wallMs = owned.wallNow();
  if (nowMs - owned.ownedAtMs < owned.trustMs && Math.abs(wallMs - owned.ownedAtWallMs) < owned.trustMs) return true;
  if (opened.owner?.held() !== true) return false;
  owned.ownedAtMs = nowMs;
  owned.ownedAtWallMs = wallMs;
  return true;
}

/**
 * Every call of an exclusive handle, reads included, and every write again
 * before its journal line and before it resolves: an owner whose claim was
 * taken over (it was frozen, or another container's owner took it) must
 * not serve, journal or acknowledge anything: the new owner has replayed
 * its journal and writes the files now.
 */
export function assertOwned(opened: Opened, owned: Exclusive, journaled = false): void {
  if (!stillOwned(opened, owned))
    throw new OwnedStoreError(opened.records.path, 'another handle (this one lost it)', journaled);
}

/** The text of a record file: the record line, then the writer line (as a claim's `fileText` writes it). */
function fileText(recordText: string, rev: number, writer: HolderInfo): string {
  return `${recordText}\n${JSON.stringify({ ...writer, rev })}\n`;
}

/** The record of `name` as this handle holds it: the version written behind, else its file. */
export async function readOwned(opened: Opened, owned: Exclusive, name: string): Promise<OperationRecord | undefined> {
  const held = owned.behind.get(name);
  if (held !== undefined) return heldRecord(name, held);
  const record = await opened.files.read(name);
  // Removed meanwhile (its file read just before it moved aside): gone.
  if (record !== undefined) return owned.behind.get(name)?.removedKey === undefined ? record : undefined;
  // A bad file was quarantined meanwhile, and an update may have kept a new version since.
  const since = owned.behind.get(name);
  return since === undefined ? undefined : heldRecord(name, since);
}

/** `fn` on the current record, and its result kept and journaled when it changed anything. */
export function updateOwned(
  opened: Opened,
  owned: Exclusive,
  key: string,
  fn: Updater,
  options: WriteOptions | undefined,
  now: () => number,
): Promise<OperationRecord | undefined> {
  const name = fileNameFor(key);
  return opened.queue.run(name, async () => {
    const { text, current } = await currentOf(opened, owned, name);
    const next = fn(current);
    if (next === current || next === undefined) return current;
    if (next.key !== key) throw new TypeError(`update of ${key} returned a record for ${next.key}`);
    const { text: recordText, stored } = serialize(next);
    await write(opened, owned, name, recordText, text, options?.durability === 'relaxed', now);
    return stored;
  });
}

/** Creates or replaces a record. */
export function putOwned(
  opened: Opened,
  owned: Exclusive,
  record: OperationRecord,
  options: WriteOptions | undefined,
  now: () => number,
): Promise<void> {
  const name = fileNameFor(record.key);
  const { text: recordText } = serialize(record);
  return opened.queue.run(name, async () => {
    const { text } = await currentOf(opened, owned, name);
    await write(opened, owned, name, recordText, text, options?.durability === 'relaxed', now);
  });
}

/**
 * Removes a record: its removal line first (durable), then its file goes
 * to `removed/` (or an empty entry says it was removed, when it never had
 * a file), so no older line brings it back (removed.ts).
 */
export function deleteOwned(
  opened: Opened,
  owned: Exclusive,
  key: string,
  now: () => number,
  onlyIf?: (current: OperationRecord) => boolean,
): Promise<void> {
  const name = fileNameFor(key);
  return opened.queue.run(name, async () => {
    const { text, current } = await currentOf(opened, owned, name);
    if (text === undefined || (onlyIf !== undefined && (current === undefined || !onlyIf(current)))) return;
    opened.files.commits++;
    const rev = nextRev(revOf(text), now());
    assertOwned(opened, owned);
    await opened.journal.append({ n: name, r: rev, d: 1 });
    assertOwned(opened, owned, true);
    // Gone for readers from here, though its file (maybe an older version) is there until it moves aside.
    const before = owned.behind.get(name);
    const mark = owned.behind.hide(name, key, rev);
    let moved = false;
    try {
      if (!(await opened.removed.moveAside(name, rev))) opened.removed.remember(name, rev);
      moved = true;
    } finally {
      // Not moved aside: the version held before stays (its file may be older), as a shared store keeps it.
      owned.behind.drop(name, mark, moved ? undefined : before);
    }
  });
}

/**
 * `list` of an exclusive handle: the files (scan.ts, through `scanFiles`),
 * with the versions written behind them in their place. Summaries and
 * filters apply to the versions as this handle holds them.
 */
export async function listOwned<T extends { key: string; nextAttemptAt: number; createdAt: number }>(
  owned: Exclusive,
  filter: RecordFilter | undefined,
  pick: (record: OperationRecord) => T,
  scanFiles: (filter: RecordFilter | undefined, pick: (record: OperationRecord) => T) => Promise<T[]>,
): Promise<T[]> {
  // Every version held now, parsed once; a file whose record is held is left out of the scan's result.
  const held = new Map<string, OperationRecord | undefined>();
  for (const [name, version] of owned.behind.entries()) {
    if (version.removedKey !== undefined) held.set(version.removedKey, undefined);
    const record = heldRecord(name, version);
    if (record !== undefined) held.set(record.key, record);
  }
  if (held.size === 0) return scanFiles(filter, pick);
  // Held versions may replace as many of the scan's picks as there are of them: the scan keeps that many more.
  let widened: RecordFilter | undefined;
  if (filter !== undefined) {
    const { limit, ...rest } = filter;
    widened = limit === undefined ? rest : { ...rest, limit: limit + held.size };
  }
  const fromFiles = (await scanFiles(widened, pick)).filter((item) => !held.has(item.key));
  const records = [...held.values()].filter((record): record is OperationRecord => record !== undefined);
  const fromMemory = applyFilter(records, widened).map(pick);
  return earliestFirst([...fromFiles, ...fromMemory], filter?.limit);
}

/** The current text of `name` (held, else its file's) and the record it holds. */
async function currentOf(
  opened: Opened,
  owned: Exclusive,
  name: string,
): Promise<{ text: string | undefined; current: OperationRecord | undefined }> {
  const held = owned.behind.get(name);
  if (held?.removedKey !== undefined) return { text: undefined, current: undefined };
  if (held !== undefined) return { text: held.text, current: parsed(name, held.text) };
  const text = await opened.files.readLocked(name);
  if (text === undefined) return { text: undefined, current: undefined };
  const checked = check(name, text);
  if (checked.ok) return { text, current: checked.record };
  await opened.files.quarantineText(name, text, checked.problems);
  return { text: undefined, current: undefined };
}

/** Journals the next version of `name` (after `currentText`) and holds it for write-behind. */
async function write(
  opened: Opened,
  owned: Exclusive,
  name: string,
  recordText: string,
  currentText: string | undefined,
  relaxed: boolean,
  now: () => number,
): Promise<void> {
  opened.files.commits++;
  const { journal, removed } = opened;
  // Above a removal of this record, even within the same millisecond (records.ts `commit`).
  const currentRev = currentText === undefined ? (removed.revisionOf(name) ?? 0) : revOf(currentText);
  const rev = nextRev(currentRev, now());
  const text = fileText(recordText, rev, owned.writer);
  const line: JournalLine = { n: name, r: rev, t: text };
  // A relaxed line needs no anchor here (journal.ts `appendRelaxed`): no file is replaced until it is
  // durable (write-behind.ts), so a crash before its flush leaves the last durable version where it was.
  assertOwned(opened, owned);
  if (!(relaxed && journal.appendRelaxed(line, undefined))) await journal.append(line);
  writeSteps.hook?.('durable');
  // The claim may have been taken while the line was flushed: then nothing is acknowledged, and the error
  // says the write may still take effect (the new owner replays this handle's journal).
  assertOwned(opened, owned, true);
  owned.behind.set(name, { text, rev });
}

/** The record a held version stands for: none while it is being removed. */
function heldRecord(name: string, held: Behind): OperationRecord | undefined {
  return held.removedKey === undefined ? parsed(name, held.text) : undefined;
}

function parsed(name: string, text: string): OperationRecord | undefined {
  const checked = check(name, text);
  return checked.ok ? checked.record : undefined;
}
