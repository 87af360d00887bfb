/**
 * What happens to the journal of a writer that is gone (journal.ts).
 *
 * - Killed, machine still up: every record it renamed is intact in the page
 *   cache (a line durable but never renamed belongs to a write that never
 *   resolved, which may be dropped). Its segments only need the checkpoint
 *   their writer did not get to: fsync the record files they name, then the
 *   directory, then delete them.
 * - Before the last boot (a power cut, or a crash of the machine; told by
 *   the boot id in the segment's name, or by its time): record
 *   files written since their last checkpoint may be empty, stale or gone.
 *   The segments are *replayed*: for every record they name, the line with
 *   the highest revision across all of them is restored when the record file
 *   is missing, unreadable, or at a lower revision, and a removal line
 *   removes it again; a line below the revision of a deletion kept in
 *   `removed/` is not restored (removed.ts). Then they are checkpointed
 *   like the others.
 * - An exclusive writer (exclusive.ts), whatever killed it: its record files
 *   lag its journal by design (write-behind.ts), so its segments
 *   (`….behind.log`) are always replayed, like those of a power cut.
 *
 * One process settles the journals at a time, under a claim on
 * `<journal dir>/recovery.pending` (claim.ts); the others wait for it. A
 * store settles dead journals before its first read or write, and again from
 * time to time while it lists records.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { checkpoint, needsResync } from './checkpoint.js';
import { type ClaimOptions, sweepBroken, sweepClaim, sweepNewClaim, takeClaim } from './claim.js';
import type { DirSync } from './durable.js';
import { isErrno, readRegular } from './io.js';
import { isLiveJournalToken, type JournalLine, SEGMENT_SUFFIX } from './journal.js';
import type { Machine } from './machine.js';
import { BROKEN_CLAIM_INFIX, NEW_CLAIM_INFIX } from './names.js';
import { OWNER_CLAIM } from './owner.js';
import type { RemovedRecords } from './removed.js';
import { parseSegmentName } from './segment-file.js';

const RECOVERY_CLAIM = 'recovery.pending';
const RECOVERY_NEW_CLAIM = `${RECOVERY_CLAIM}${NEW_CLAIM_INFIX}`;
const RECOVERY_BROKEN_CLAIM = `${RECOVERY_CLAIM}${BROKEN_CLAIM_INFIX}`;
const OWNER_NEW_CLAIM = `${OWNER_CLAIM}${NEW_CLAIM_INFIX}`;
const OWNER_BROKEN_CLAIM = `${OWNER_CLAIM}${BROKEN_CLAIM_INFIX}`;

export interface RecoveryContext {
  journalDir: string;
  records: DirSync;
  claimOptions: ClaimOptions;
  /**
   * Restores `line` (durably, under the record's claim) if the record file
   * is missing, unreadable or older. True when it changed the file.
   */
  restore(line: JournalLine): Promise<boolean>;
  /** Writes record `name`'s current version again into a new file, durably (checkpoint.ts `resync`). */
  resync?: ((name: string) => Promise<void>) | undefined;
  /** Where deletions moved their records: no line below a removal kept there is restored. */
  removed?: RemovedRecords | undefined;
  /**
   * The settling handle owns the directory (owner.ts): every other exclusive
   * writer's segment (`….behind.log`) is then dead, even one whose writer
   * cannot be checked from here (another container): that writer lost the
   * owner claim, and its acknowledged writes are replayed, not left to it.
   */
  owner?: () => boolean;
}

export interface RecoveryReport {
  /** Segments of gone writers checkpointed and removed. */
  settled: number;
  /** Records restored or removed again from segments written before the last boot. */
  replayed: number;
}

interface DeadSegment {
  path: string;
  mtimeMs: number;
  /** Its lines may be newer than the record files: written before the last boot, or by an exclusive writer. */
  replay: boolean;
}

/** Checkpoints (and, after a reboot, replays) the journal segments of writers that are gone. */
export async function settleDeadJournals(context: RecoveryContext): Promise<RecoveryReport> {
  const report: RecoveryReport = { settled: 0, replayed: 0 };
  if (deadSegments(context.journalDir, context.claimOptions.machine, context.owner?.() === true).length === 0)
    return report;
  const claim = await takeClaim(join(context.journalDir, RECOVERY_CLAIM), context.claimOptions);
  try {
    // Listed again under the claim: another process may have settled them meanwhile.
    // Asked again under the claim (a wait for it may have been long): a handle that lost the directory
    // meanwhile must not take the new owner's journal for dead.
    const dead = deadSegments(context.journalDir, context.claimOptions.machine, context.owner?.() === true).sort(
      (a, b) => a.mtimeMs - b.mtimeMs,
    );
    // Only segments written before the last boot are replayed (a power cut may have lost their records'
    // writes since), those of an exclusive writer (its files lag its journal), and those a failed fsync marked (the write-back may have lost them, and the pages may
    // be gone from memory since); the others are only checkpointed, which reads their names itself.
    const latest = new Map<string, JournalLine>();
    for (const segment of dead) {
      if (!segment.replay && !needsResync(segment.path)) continue;
      for (const line of readLines(segment.path)) {
        const seen = latest.get(line.n);
        if (seen === undefined || line.r >= seen.r) latest.set(line.n, line);
      }
    }
    // A deletion whose own segment may be gone already: the versions it removed (every revision below
    // its removal's) stay removed; a version written after it (a record created again) is restored.
    const removedAt = latest.size === 0 ? undefined : context.removed?.revisions();
    for (const line of latest.values()) {
      if (line.t !== undefined && line.r < (removedAt?.get(line.n) ?? Number.NEGATIVE_INFINITY)) continue;
      // A removal replayed outlives the segment it came from (deleted below), as its own deletion's entry would.
      if (line.t === undefined) context.removed?.remember(line.n, line.r);
      if (await context.restore(line)) report.replayed++;
    }
    await context.removed?.sync();
    for (const segment of dead) {
      await checkpoint(segment.path, context.records, {
        removed: context.removed,
        prune: false,
        resync: context.resync,
        resyncAll: needsResync(segment.path),
      });
      report.settled++;
    }
  } finally {
    await claim.release();
  }
  // Not under the claim: after a big sweep, pruning may unlink many entries, and other processes wait for it.
  await context.removed?.prune().catch((error: unknown) => {
    // Entries left are only kept longer: the next checkpoint prunes them.
    process.emitWarning(`oncely: pruning removed records failed: ${String(error)}`);
  });
  return report;
}

/**
 * Segments whose writer is provably gone: written before the last boot, or
 * by a dead process of this host (and pid namespace). Sweeps the recovery
 * claim's crash debris on the way.
 */
function deadSegments(journalDir: string, machine: Machine, owner: boolean): DeadSegment[] {
  let names: string[];
  try {
    names = fs.readdirSync(journalDir);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    throw error;
  }
  const dead: DeadSegment[] = [];
  for (const name of names) {
    // Recovery claims of processes that died holding one, or creating one (claim.md): nobody may
    // need recovery again for a long time, so they are swept here rather than when next taken.
    if (name === RECOVERY_CLAIM) sweepClaim(join(journalDir, name), machine);
    if (name.startsWith(RECOVERY_NEW_CLAIM)) sweepNewClaim(join(journalDir, name), machine);
    if (name.startsWith(RECOVERY_BROKEN_CLAIM)) sweepBroken(join(journalDir, name), machine);
    // The owner claim's debris (owner.ts): a takeover or a create killed half-way.
    if (name.startsWith(OWNER_NEW_CLAIM)) sweepNewClaim(join(journalDir, name), machine);
    if (name.startsWith(OWNER_BROKEN_CLAIM)) sweepBroken(join(journalDir, name), machine);
    if (!name.endsWith(SEGMENT_SUFFIX)) continue;
    const parsed = parseSegmentName(name);
    if (parsed === undefined) continue;
    const { host, pid, token, boot, behind } = parsed;
    const path = join(journalDir, name);
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(path).mtimeMs;
    } catch {
      continue; // settled by someone else meanwhile
    }
    // Written on this host during another boot (by the boot id, when both have one), or before this boot began.
    const previousBoot = (host === machine.hostId() && isOtherBoot(machine, boot)) || mtimeMs < machine.bootedAtMs();
    // A writer whose pid cannot be checked from here (another host name, pid namespace or machine: say,
    // the same container restarted) is left alone until a reboot proves it gone: taking a live writer for
    // a dead one would delete the segment it still writes to (a changed clock makes any idle rule unsafe).
    const ours = host === machine.hostId() && pid === process.pid && isLiveJournalToken(token);
    const gone =
      previousBoot ||
      (owner && behind && !ours) ||
      (machine.isCheckableHost(host) && (pid === process.pid ? !isLiveJournalToken(token) : !machine.pidAlive(pid)));
    if (gone) dead.push({ path, mtimeMs, replay: previousBoot || behind });
  }
  return dead;
}

/** A segment's boot part names a boot other than this one (neither may be known). */
function isOtherBoot(machine: Machine, boot: string | undefined): boolean {
  const current = machine.bootId();
  return boot !== undefined && current !== undefined && boot !== current;
}

/** The whole lines of a segment; a torn last line (the writer died mid-append) ends it. */
function readLines(path: string): JournalLine[] {
  const read = readRegular(path);
  // Not a regular file (nothing we wrote): no lines, and its checkpoint removes the name.
  if (read.kind !== 'text') return [];
  const { text } = read;
  const lines: JournalLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw.length === 0) continue;
    let line: unknown;
    try {
      line = JSON.parse(raw);
    } catch {
      break;
    }
    if (!isJournalLine(line)) break;
    lines.push(line);
  }
  return lines;
}

function isJournalLine(value: unknown): value is JournalLine {
  if (typeof value !== 'object' || value === null) return false;
  const line = value as Partial<JournalLine>;
  return (
    typeof line.n === 'string' &&
    typeof line.r === 'number' &&
    (line.d === 1 ? line.t === undefined : typeof line.t === 'string')
  );
}
