/**
 * The cross-process lock of one record, which is also its temp file.
 *
 * To change `<name>.json`, a process creates `<name>.json.pending` with
 * `O_CREAT | O_EXCL`: whoever creates it holds the record. The file first
 * holds one line naming its holder (host id, pid, token). To commit, the
 * holder writes the new record into it (`<record json>\n<holder, rev>\n`),
 * makes it durable (journal.ts) and renames it over `<name>.json`: one
 * rename publishes the record atomically and releases the lock. So an update costs the same two
 * directory-entry changes as a plain temp-file write (create, rename); a
 * separate lock file would add two more, and on a busy disk each of those
 * waits for the journal.
 *
 * Written by hand rather than with `proper-lockfile` because:
 * - `proper-lockfile` keeps a lock directory beside the file (mkdir + rmdir
 *   per hold: the two extra journal operations above) and a timer per lock;
 * - it only knows mtime age (stale after seconds), while a holder killed
 *   mid-update here (the crash tests do it hundreds of times) is taken over
 *   at once: the pending file names its holder, and `kill(pid, 0)` on this
 *   host tells a dead one from a live one;
 * - taking over must not let two contenders both win, which needs the
 *   takeover below.
 *
 * Staleness. A claim is stale, and taken over at once, when its holder is
 * provably gone: a dead pid on this host, a claim of this very process that
 * no store of it holds, or a file older than the last boot (a power cut).
 * A holder we cannot check (another host sharing the directory, a recycled
 * pid, a file without a readable holder line) is stale only once we have
 * watched it unchanged for `staleMs` of our own monotonic time; live holders
 * refresh their file's mtime every `staleMs / 3`, and a monotonic clock
 * does not run while the machine sleeps, so a laptop waking up does not
 * take a claim from a holder that slept with it.
 *
 * Takeover renames the stale file aside to a unique name (atomic), checks it
 * moved the very file it judged stale, and gives back with `link` (which
 * never replaces) a fresh claim it moved by mistake. Before committing, a
 * holder checks that the pending path is still its own file (same inode as
 * its open descriptor, which cannot be recycled while open); a holder that
 * lost its claim gives up and its update runs again.
 *
 * Residual risk, documented: a holder frozen (SIGSTOP, debugger) for longer
 * than `staleMs` exactly between that check and its rename (microseconds
 * apart) could rename its successor's pending file. Nothing short of a
 * kernel lock closes that window, and Node has none (no flock).
 */
import * as fs from 'node:fs';
import type { Runtime } from '../../runtime.js';
import { writeSteps } from './durable.js';
import { closeFile, isErrno, openFile, renameFile, unlinkFile, writeAllSync } from './io.js';
import { BOOTED_AT, HOST_ID, pidAlive, randomToken } from './liveness.js';

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
  runtime: Pick<Runtime, 'monotonicNow' | 'sleep' | 'random'>;
}

interface HolderInfo {
  host: string;
  pid: number;
  token: string;
}

/**
 * A pending file still empty after we watched it this long is stale: its
 * creator died between creating it and writing its holder line (a window of
 * one thread-pool round trip), or is stuck there, in which case its check
 * before committing makes it retry.
 */
const EMPTY_CLAIM_GRACE_MS = 1_000;
/** A sweep, which cannot watch, removes an empty claim once it is this old (wall clock). */
export const EMPTY_CLAIM_SWEEP_AGE_MS = 5_000;
const MAX_POLL_MS = 16;

/** Tokens of the claims this process holds or is taking right now, across every store instance. */
const heldTokens = new Set<string>();

export class LockTimeoutError extends Error {
  override name = 'LockTimeoutError';
  readonly code = 'ELOCKTIMEOUT';
}

function step(name: Parameters<NonNullable<typeof writeSteps.hook>>[0]): void {
  writeSteps.hook?.(name);
}

/** A held claim on one record: commit a new version, or release. */
export class Claim {
  readonly #path: string;
  readonly #fd: number;
  readonly #ino: number;
  readonly #token: string;
  readonly #holder: HolderInfo;
  readonly #refresh: NodeJS.Timeout;
  #done = false;

  constructor(path: string, fd: number, holder: HolderInfo, staleMs: number) {
    this.#path = path;
    this.#fd = fd;
    this.#ino = fs.fstatSync(fd).ino;
    this.#token = holder.token;
    this.#holder = holder;
    this.#refresh = setInterval(() => this.#touch(), Math.max(1, Math.floor(staleMs / 3)));
    this.#refresh.unref();
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
   * line, or an fsync of `fd`), then rename it over the record, which
   * publishes it atomically and releases the claim. Resolves false, having
   * published nothing, when the claim was lost (the caller retries).
   */
  async commit(recordPath: string, text: string, makeDurable: (fd: number) => Promise<void>): Promise<boolean> {
    writeAllSync(this.#fd, Buffer.from(text, 'utf8'), 0);
    step('temp-written');
    await makeDurable(this.#fd);
    step('durable');
    if (!this.#stillOurs()) return false;
    try {
      await renameFile(this.#path, recordPath);
    } catch (error) {
      // Taken over between the check and the rename: nothing was published.
      if (isErrno(error, 'ENOENT')) return false;
      throw error;
    }
    this.#done = true;
    step('renamed');
    await this.release();
    return true;
  }

  /** Drops the claim without committing (nothing changed, or the update failed). Idempotent. */
  async release(): Promise<void> {
    clearInterval(this.#refresh);
    if (!this.#done) {
      this.#done = true;
      if (this.#stillOurs()) await unlinkFile(this.#path).catch(() => undefined);
    }
    // Closing a file we only wrote to does not wait for the disk: not worth a thread-pool round trip.
    if (heldTokens.delete(this.#token)) {
      try {
        fs.closeSync(this.#fd);
      } catch {
        // Already closed: nothing to release.
      }
    }
  }

  /** The pending path is still the file we created (not taken over and replaced). */
  #stillOurs(): boolean {
    try {
      return fs.statSync(this.#path).ino === this.#ino;
    } catch {
      return false;
    }
  }

  #touch(): void {
    const now = new Date();
    fs.futimes(this.#fd, now, now, () => undefined);
  }
}

/** Takes the claim at `path` (`<record>.pending`), waiting for a live holder and taking over a dead one. */
export async function takeClaim(path: string, options: ClaimOptions): Promise<Claim> {
  const token = randomToken();
  const self: HolderInfo = { host: HOST_ID, pid: process.pid, token };
  const holderLine = `${JSON.stringify(self)}\n`;
  const { runtime } = options;
  const deadline = runtime.monotonicNow() + options.timeoutMs;
  // Registered before the file exists: a sweep in this process must never take it for a leftover.
  heldTokens.add(token);
  let watched: { ino: number; mtimeMs: number; size: number; since: number } | undefined;
  try {
    for (let round = 0; ; round++) {
      const fd = await tryCreate(path, holderLine);
      if (fd !== undefined) return new Claim(path, fd, self, options.staleMs);
      const holder = inspect(path);
      if (holder === undefined) continue; // released meanwhile: try again at once
      if (provablyStale(holder)) {
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
      } else if (now - watched.since >= (holder.size === 0 ? EMPTY_CLAIM_GRACE_MS : options.staleMs)) {
        breakClaim(path, holder, token);
        watched = undefined;
        continue;
      }
      if (now >= deadline) {
        const who =
          holder.info === undefined ? 'an unknown holder' : `pid ${holder.info.pid} (host ${holder.info.host})`;
        throw new LockTimeoutError(`Timed out after ${options.timeoutMs} ms waiting for ${path}, held by ${who}`);
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
 * Creates the pending file with our holder line; undefined when someone
 * holds it. The create runs on the thread pool: it changes the directory,
 * and on ext4 that can wait behind a file-system journal commit (which
 * every journal flush starts) for milliseconds; measured synchronous, it
 * took half of the main thread's time at 32 writers. Writing into the
 * file we hold is synchronous (the holder line here, the new version in
 * `commit`): page cache only, cheaper than a thread-pool round trip.
 */
async function tryCreate(path: string, holderLine: string): Promise<number | undefined> {
  let fd: number;
  try {
    fd = await openFile(path, 'wx', 0o600);
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return undefined;
    throw error;
  }
  try {
    writeAllSync(fd, Buffer.from(holderLine, 'utf8'), 0);
  } catch (error) {
    await closeFile(fd).catch(() => undefined);
    await unlinkFile(path).catch(() => undefined);
    throw error;
  }
  return fd;
}

interface Holder {
  raw: string;
  info: HolderInfo | undefined;
  ino: number;
  size: number;
  mtimeMs: number;
}

function inspect(path: string): Holder | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    const raw = fs.readFileSync(fd, 'utf8');
    return { raw, info: holderOf(raw), ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

/** The holder named by the last line of a pending file. */
function holderOf(raw: string): HolderInfo | undefined {
  const lines = raw.split('\n').filter((line) => line.length > 0);
  const last = lines[lines.length - 1];
  if (last === undefined) return undefined;
  try {
    const value = JSON.parse(last) as Partial<HolderInfo> | null;
    if (typeof value?.host === 'string' && typeof value.pid === 'number' && typeof value.token === 'string') {
      return { host: value.host, pid: value.pid, token: value.token };
    }
  } catch {
    // Torn: no holder to check.
  }
  return undefined;
}

function provablyStale(holder: Holder): boolean {
  if (holder.mtimeMs < BOOTED_AT) return true;
  const { info } = holder;
  if (info === undefined || info.host !== HOST_ID) return false;
  if (info.pid === process.pid) return !heldTokens.has(info.token);
  return !pidAlive(info.pid);
}

/**
 * Removes the stale claim `observed` (same file, same content), and nothing
 * else: rename it aside (atomic), check what was moved, and give back a
 * fresh claim moved by mistake.
 */
function breakClaim(path: string, observed: Holder, token: string): void {
  const aside = `${path}.broken-${token}`;
  try {
    fs.renameSync(path, aside);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return;
    throw error;
  }
  let same = false;
  try {
    same = fs.statSync(aside).ino === observed.ino && fs.readFileSync(aside, 'utf8') === observed.raw;
  } catch {
    same = false;
  }
  if (!same) {
    try {
      fs.linkSync(aside, path);
    } catch {
      // EEXIST: a newer claim took the name meanwhile. The holder we moved
      // finds its file gone when it checks before committing, and retries.
    }
  }
  fs.rmSync(aside, { force: true });
}

/**
 * Removes the pending files of dead holders (a crash leaves them; a record
 * nobody updates again would keep its pending file forever): provably dead
 * ones, and empty ones older than `EMPTY_CLAIM_SWEEP_AGE_MS`. Safe while
 * others work: it uses the same takeover as `takeClaim`.
 */
export function sweepClaim(path: string): void {
  try {
    const holder = inspect(path);
    if (holder === undefined) return;
    const emptyAndOld = holder.size === 0 && Date.now() - holder.mtimeMs > EMPTY_CLAIM_SWEEP_AGE_MS;
    if (provablyStale(holder) || emptyAndOld) breakClaim(path, holder, randomToken());
  } catch {
    // Raced with its holder or another sweeper: it is their file now.
  }
}

/** Removes a takeover leftover (`*.pending.broken-*`) once it is older than `staleMs`. */
export function sweepBroken(path: string, staleMs: number): void {
  try {
    if (Date.now() - fs.statSync(path).mtimeMs > staleMs) fs.rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}
