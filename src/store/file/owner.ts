/**
 * The owner of a store directory: the claim an `exclusive` file store holds
 * for as long as it is open (exclusive.ts), and how every other handle
 * finds out about it.
 *
 * An exclusive handle keeps the latest version of the records it writes in
 * memory and in its journal, and writes their files later (write-behind.ts),
 * so while it lives the record files may be behind. No one else may write
 * them meanwhile, and no one else can read them reliably. The owner claim
 * (`journal/owner.pending`, a claim like any record's: claim.md) says so:
 *
 * - another exclusive handle waits for it like for any claim, and takes it
 *   over at once from an owner that died (its journal is replayed first:
 *   recovery.ts);
 * - a shared handle looks for it after taking a record's claim, before it
 *   reads or writes that record, and stops with `OwnedStoreError` while the
 *   owner lives. Looking *after* its own claim exists is what makes this
 *   safe without a lock around both: an owner that appears later waits for
 *   every record claim it finds when it starts (`waitForRecordClaims`), so
 *   either the shared handle sees the owner, or the owner sees its claim.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { OncelyError } from '../../errors.js';
import { type Claim, type ClaimOptions, sweepClaim, takeClaim } from './claim.js';
import { inspect, staleAtOnce } from './claim-files.js';
import { entryPrefix } from './io.js';
import type { Machine } from './machine.js';
import { parseFileName } from './names.js';

/** The owner claim, in the journal directory (no record name can collide with it). */
export const OWNER_CLAIM = 'owner.pending';

/**
 * A shared (non-exclusive) handle met a directory that a live exclusive
 * handle owns. Nothing was read or written; open the directory with
 * `exclusive: true` in that process only, or stop it first.
 */
export class OwnedStoreError extends OncelyError {
  override name = 'OwnedStoreError' as const;
  declare readonly code: 'store_owned';
  /** The store directory. */
  readonly dir: string;
  /**
   * The write's journal line was already written when this handle found
   * its claim taken: the new owner may replay it, so the write may take
   * effect. Never send that operation again as a new one.
   */
  readonly mayHaveBeenWritten: boolean;
  constructor(dir: string, holder: string, mayHaveBeenWritten = false) {
    super(
      'store_owned',
      mayHaveBeenWritten
        ? `The file store at ${dir} was taken over by ${holder} while this write was journaled: it may still take effect, when the new owner replays this handle's journal. ` +
            'Read the operation through the process that owns the directory now; do not send it again as a new operation.'
        : `The file store at ${dir} is owned by ${holder}, which opened it with \`exclusive: true\`; nothing was read or written. ` +
            'Its record files may be behind its journal while it runs: go through that process, or stop it and try again.',
      mayHaveBeenWritten
        ? {
            remediation:
              'The write may take effect: read the operation through the process that owns the store now, and never send it again under a new key.',
          }
        : { remediation: 'Nothing was read or written: another process owns this file store (`exclusive: true`).' },
    );
    this.dir = dir;
    this.mayHaveBeenWritten = mayHaveBeenWritten;
  }
}

/** What a shared handle finds at the owner claim. */
export type OwnerState = { kind: 'none' } | { kind: 'live'; holder: string } | { kind: 'dead' };

/** Whether an exclusive handle owns the directory whose journal is `journalDir` (never blocks). */
export function ownerOf(journalDir: string, machine: Machine): OwnerState {
  const path = entryPrefix(journalDir) + OWNER_CLAIM;
  // Looked at twice per shared write (before it, and under its claim), and nearly always absent: `existsSync`
  // says so without the exception a failed open throws (most of this look's CPU). One look either way: an
  // owner that appears just after it is seen by the next one, exactly as after a failed open.
  if (!fs.existsSync(path)) return { kind: 'none' };
  const holder = inspect(path);
  if (holder === undefined) return { kind: 'none' };
  if (staleAtOnce(holder, machine)) return { kind: 'dead' };
  const { info } = holder;
  return { kind: 'live', holder: info === undefined ? 'a process starting up' : `pid ${info.pid} (host ${info.host})` };
}

/** Takes the owner claim of the directory (waiting for a live owner up to `timeoutMs`, like any claim). */
export function takeOwnership(journalDir: string, options: ClaimOptions): Promise<Claim> {
  return takeClaim(join(journalDir, OWNER_CLAIM), options);
}

/**
 * Waits until every record claim a shared handle held when ownership was
 * taken is gone (committed, released, or its holder dead): those handles
 * looked for an owner before there was one. A claim taken since sees the
 * owner and writes nothing.
 */
export async function waitForRecordClaims(dir: string, options: ClaimOptions): Promise<void> {
  for (const name of fs.readdirSync(dir)) {
    if (parseFileName(name).kind !== 'pending') continue;
    // Taking it waits for its holder (or takes it over from a dead one); giving it back at once leaves the
    // record as it was.
    const claim = await takeClaim(join(dir, name), options);
    await claim.release();
  }
}

/**
 * A shared handle, before each read or write: stops while an exclusive
 * handle owns the directory, and replays the journal of one that died.
 * Writes look again under their record's claim (records.ts).
 */
export async function ownerGone(
  dir: string,
  journalDir: string,
  machine: Machine,
  settle: () => Promise<void>,
): Promise<void> {
  const owner = ownerOf(journalDir, machine);
  if (owner.kind === 'live') throw new OwnedStoreError(dir, owner.holder);
  if (owner.kind === 'dead') await settleDeadOwner(dir, journalDir, machine, settle);
}

/** Replays (`settle`) the journal of an owner that died, then sweeps its claim: not before (see the top). */
export async function settleDeadOwner(
  dir: string,
  journalDir: string,
  machine: Machine,
  settle: () => Promise<void>,
): Promise<void> {
  await settle();
  sweepClaim(join(journalDir, OWNER_CLAIM), machine);
  // A claim that cannot be removed would send every call back here: say so instead.
  if (ownerOf(journalDir, machine).kind === 'dead')
    throw new Error(`the claim of a dead owner of ${dir} could not be removed`);
}

/**
 * An exclusive handle takes the directory before anything else: the owner
 * claim, then every record claim a shared handle still held, then the
 * journals of writers that are gone (`settle`; a previous owner's among them).
 */
export async function takeDirectory(
  current: { owner: Claim | undefined },
  dir: string,
  journalDir: string,
  options: ClaimOptions,
  settle: () => Promise<void>,
): Promise<void> {
  current.owner ??= await takeOwnership(journalDir, options);
  await waitForRecordClaims(dir, options);
  await settle();
}
