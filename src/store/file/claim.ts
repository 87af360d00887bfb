/**
 * The cross-process lock of one record, which is also its temp file: take
 * it, commit a new version through it, or release it. The protocol (how a
 * claim is created with its holder line, when one is stale, how it is taken
 * over) is described in claim.md beside this file; claim-files.ts reads and
 * breaks claim files.
 *
 * A claim costs the directory changes of a plain temp-file write and no
 * more: an exclusive create, then the rename that commits (or an unlink when
 * nothing is committed).
 */
import * as fs from 'node:fs';
import type { Runtime } from '../../runtime.js';
import { type Created, closeQuietly, statIfOwned, step, tryCreate } from './claim-create.js';
import {
  breakClaim,
  type Holder,
  type HolderInfo,
  heldTokens,
  inspect,
  staleAtOnce,
  UNREADABLE_CLAIM_GRACE_MS,
} from './claim-files.js';
import { isErrno, renameFile, unlinkFile, writeTextSync } from './io.js';
import { LockTimeoutError } from './lock-timeout.js';
import type { Machine } from './machine.js';
import { randomToken } from './token.js';

export { sweepBroken, sweepClaim, sweepNewClaim, UNREADABLE_CLAIM_GRACE_MS } from './claim-files.js';
export { LockTimeoutError } from './lock-timeout.js';

export interface ClaimOptions {
  /** How long a claim of a holder we cannot check must stay unchanged before it is taken over. */
  staleMs: number;
  /** Give up waiting for a live holder after this long. */
  timeoutMs: number;
  /**
   * The clock and timers of the wait for a holder: how long we watched a
   * claim, when we give up, the pause between looks. (A claim file's own
   * age is judged by the file system's clock, which wrote its times.)
   */
  runtime: Pick<Runtime, 'monotonicNow' | 'sleep' | 'random' | 'schedule'>;
  /** Who this process is, and whether a holder is alive (machine.ts). */
  machine: Machine;
}

const MAX_POLL_MS = 16;

/** A held claim on one record: commit a new version, or release. */
export class Claim {
  readonly #path: string;
  readonly #fd: number;
  readonly #ino: number;
  readonly #token: string;
  readonly #holder: HolderInfo;
  readonly #schedule: Runtime['schedule'];
  readonly #refreshEveryMs: number;
  readonly #fileClockNow: () => number;
  /** Cancels the next refresh. */
  #cancelRefresh: () => void;
  #done = false;
  #released = false;
  /** The descriptor was handed over after the commit (`commit`'s `keep`): release must not close it. */
  #handedOver = false;

  constructor(created: Created, holder: HolderInfo, options: ClaimOptions) {
    this.#path = created.path;
    this.#fd = created.fd;
    this.#ino = created.ino;
    this.#token = holder.token;
    this.#holder = holder;
    this.#schedule = options.runtime.schedule;
    this.#fileClockNow = options.machine.fileClockNow;
    this.#refreshEveryMs = Math.max(1, Math.floor(options.staleMs / 3));
    this.#cancelRefresh = this.#scheduleRefresh();
  }

  /** Touches the claim every third of `staleMs` while held, so no one takes it for abandoned. */
  #scheduleRefresh(): () => void {
    return this.#schedule(this.#refreshEveryMs, () => {
      if (this.#released) return;
      this.#touch();
      this.#cancelRefresh = this.#scheduleRefresh();
    });
  }

  /**
   * The text of the record file for `recordText` at revision `rev`: the
   * record line, then the writer line (this holder, and the revision).
   */
  fileText(recordText: string, rev: number): string {
    return `${recordText}\n${JSON.stringify({ ...this.#holder, rev })}\n`;
  }

  /**
   * Publishes `text` (from `fileText`) as the record at `recordPath`: write
   * it into the claim file, make it durable with `makeDurable` (a journal
   * line, or an fsync of `fd`; or only queue its journal line, for a relaxed
   * write: then it returns nothing to wait for), then rename it over the
   * record, which publishes it atomically and releases the claim. Resolves
   * false, having published nothing, when the claim was lost (the caller
   * retries). The caller releases the claim in every case (`finally`).
   * Once published, the file's descriptor goes to `keep` (which owns it from
   * then on) instead of being closed, with what the ownership check's `stat`
   * saw of the file (a rename changes neither its inode, size nor mtime).
   * `replacing` runs just before the rename, once the claim is known to be
   * still ours.
   */
  async commit(
    recordPath: string,
    text: string,
    makeDurable: (fd: number) => Promise<void> | undefined,
    keep?: (fd: number, stat: fs.Stats) => void,
    replacing?: () => void,
  ): Promise<boolean> {
    writeTextSync(this.#fd, text, 0);
    step('temp-written');
    const durable = makeDurable(this.#fd);
    if (durable !== undefined) await durable;
    step('durable');
    const stat = statIfOwned(this.#path, this.#ino);
    if (stat === undefined) return false;
    replacing?.();
    try {
      await renameFile(this.#path, recordPath);
    } catch (error) {
      // Taken over between the check and the rename: nothing was published.
      if (isErrno(error, 'ENOENT')) return false;
      throw error;
    }
    this.#done = true;
    if (keep !== undefined) {
      this.#handedOver = true;
      keep(this.#fd, stat);
    }
    step('renamed');
    await this.release();
    return true;
  }

  /** Drops the claim without committing (nothing changed, or the update failed). Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#cancelRefresh();
    try {
      if (!this.#done) {
        this.#done = true;
        if (this.#stillOurs()) await unlinkFile(this.#path).catch(() => undefined);
      }
    } finally {
      heldTokens.delete(this.#token);
      // Closing a file we only wrote to does not wait for the disk: not worth a thread-pool round trip.
      if (!this.#handedOver) closeQuietly(this.#fd);
    }
  }

  /**
   * Lets go of the claim without removing its file, which then names a
   * holder that is gone: everyone treats it as a crash's (stale at once, in
   * this process too) and does what follows a crash first. For an owner
   * whose record files could not be brought up to date (owner.ts).
   */
  abandon(): void {
    if (this.#released) return;
    this.#released = true;
    this.#done = true;
    this.#cancelRefresh();
    heldTokens.delete(this.#token);
    if (!this.#handedOver) closeQuietly(this.#fd);
  }

  /** Whether this claim is still held: not released, and its file not taken over. */
  held(): boolean {
    return !this.#released && this.#stillOurs();
  }

  /** The claim path is still the file we created (not taken over and replaced). */
  #stillOurs(): boolean {
    return statIfOwned(this.#path, this.#ino) !== undefined;
  }

  /**
   * Synchronously: a thread pool starved by other work (DNS lookups, fsyncs
   * on a stalled disk) must not keep a live holder from refreshing its claim
   * while its event loop, and its own look at the claim (owner.ts), run on.
   */
  #touch(): void {
    const now = new Date(this.#fileClockNow());
    try {
      fs.futimesSync(this.#fd, now, now);
    } catch {
      // Closed by a release that raced this timer: nothing to refresh.
    }
  }
}

/** Takes the claim at `path` (`<record>.pending`), waiting for a live holder and taking over a dead one. */
export async function takeClaim(path: string, options: ClaimOptions): Promise<Claim> {
  const token = randomToken();
  const self: HolderInfo = { host: options.machine.hostId(), pid: process.pid, token };
  // With the stale time it refreshes by, which a taker honours when it is longer than its own (claim.md).
  const holderLine = `${JSON.stringify({ ...self, staleMs: options.staleMs })}\n`;
  const { runtime } = options;
  const deadline = runtime.monotonicNow() + options.timeoutMs;
  // Registered before the file exists: a sweep in this process must never take it for a leftover.
  heldTokens.add(token);
  let watched: { ino: number; mtimeMs: number; size: number; since: number } | undefined;
  try {
    for (let round = 0; ; round++) {
      const created = await tryCreate(path, holderLine);
      if (created !== undefined) return new Claim(created, self, options);
      const holder = inspect(path);
      if (holder === undefined) continue; // released meanwhile: try again at once
      if (staleAtOnce(holder, options.machine)) {
        breakClaim(path, holder, token);
        continue;
      }
      const now = runtime.monotonicNow();
      if (
        watched === undefined ||
        watched.ino !== holder.ino ||
        watched.mtimeMs !== holder.mtimeMs ||
        watched.size !== holder.size
      ) {
        watched = { ino: holder.ino, mtimeMs: holder.mtimeMs, size: holder.size, since: now };
      } else if (now - watched.since >= watchFor(holder, options.staleMs)) {
        // Watched unchanged long enough. For a claim naming nobody this only
        // matters when its mtime is in the future (a clock moved back): else
        // its own age already made it stale above.
        breakClaim(path, holder, token);
        watched = undefined;
        continue;
      }
      if (now >= deadline) {
        const who =
          holder.info === undefined ? 'an unknown holder' : `pid ${holder.info.pid} (host ${holder.info.host})`;
        throw new LockTimeoutError(path, options.timeoutMs, who);
      }
      const pollMs = Math.min(MAX_POLL_MS, 2 ** Math.min(round, 4));
      await runtime.sleep(pollMs * (0.5 + runtime.random()));
    }
  } catch (error) {
    heldTokens.delete(token);
    throw error;
  }
}

/**
 * How long a claim must stay unchanged under our eyes before it is taken
 * over: the grace for one naming nobody; else the longer of our
 * `staleLockMs` and the one its holder declares. A holder refreshes every
 * third of its own: a taker with a shorter setting must not take a live
 * holder's claim between two of its refreshes.
 */
function watchFor(holder: Holder, ownStaleMs: number): number {
  if (holder.info === undefined) return UNREADABLE_CLAIM_GRACE_MS;
  return Math.max(ownStaleMs, holder.staleMs ?? 0);
}
