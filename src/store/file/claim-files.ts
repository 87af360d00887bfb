/**
 * Claim files as others see them: who holds one, whether that holder is
 * gone, and how a stale one is taken over or swept. The protocol is in
 * claim.md; taking and committing a claim is in claim.ts.
 */
import * as fs from 'node:fs';
import { isErrno, readRegular } from './io.js';
import type { Machine } from './machine.js';
import { BROKEN_CLAIM_INFIX } from './names.js';
import { randomToken } from './token.js';

export interface HolderInfo {
  host: string;
  pid: number;
  token: string;
}

/** A claim file as we found it. */
export interface Holder {
  raw: string;
  /** The holder its last line names; undefined when none is readable (empty, torn, not a regular file). */
  info: HolderInfo | undefined;
  /**
   * The `staleLockMs` its holder refreshes it by (every third of it), as its
   * holder line declares it: a taker watches it unchanged at least that
   * long, whatever its own setting. Undefined in claims of older versions.
   */
  staleMs?: number | undefined;
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * A claim that names no readable holder is stale once it is this old by its
 * own mtime (or once we watched it unchanged this long). A live holder's
 * claim is unreadable only for the instant of a write into it, and that
 * write renews its mtime (claim.md).
 */
export const UNREADABLE_CLAIM_GRACE_MS = 1_000;

/** Tokens of the claims this process holds or is taking right now, across every store instance. */
export const heldTokens = new Set<string>();

/** The claim file at `path`, or undefined when there is none. Never blocks (`readRegular`). */
export function inspect(path: string): Holder | undefined {
  const read = readRegular(path);
  if (read.kind === 'missing') return undefined;
  if (read.kind === 'odd') return { raw: '', info: undefined, ino: read.ino, size: 0, mtimeMs: read.mtimeMs };
  const { info, staleMs } = holderOf(read.text);
  return { raw: read.text, info, staleMs, ino: read.ino, size: read.size, mtimeMs: read.mtimeMs };
}

/** The holder named by the last line of a claim file, and the stale time it declares. */
function holderOf(raw: string): { info: HolderInfo | undefined; staleMs: number | undefined } {
  const lines = raw.split('\n').filter((line) => line.length > 0);
  const last = lines[lines.length - 1];
  if (last === undefined) return { info: undefined, staleMs: undefined };
  try {
    const value = JSON.parse(last) as (Partial<HolderInfo> & { staleMs?: unknown }) | null;
    if (typeof value?.host === 'string' && typeof value.pid === 'number' && typeof value.token === 'string') {
      const staleMs = typeof value.staleMs === 'number' && value.staleMs > 0 ? value.staleMs : undefined;
      return { info: { host: value.host, pid: value.pid, token: value.token }, staleMs };
    }
  } catch {
    // Torn: no holder to check.
  }
  return { info: undefined, staleMs: undefined };
}

/**
 * Stale without watching it: its holder is provably gone, or it names no
 * holder and is older than the grace by its own mtime (so a crash-looping
 * process breaks it on its first look, however short its life).
 */
export function staleAtOnce(holder: Holder, machine: Machine): boolean {
  if (holder.mtimeMs < machine.bootedAtMs()) return true;
  const { info } = holder;
  if (info === undefined) return machine.fileClockNow() - holder.mtimeMs >= UNREADABLE_CLAIM_GRACE_MS;
  if (info.host !== machine.hostId()) return false;
  if (info.pid === process.pid) return !heldTokens.has(info.token);
  return !machine.pidAlive(info.pid);
}

/**
 * Removes the stale claim `observed` (same file, same content), and nothing
 * else: rename it aside (atomic), check what was moved, and give back a
 * fresh claim moved by mistake.
 */
export function breakClaim(path: string, observed: Holder, token: string): void {
  const aside = `${path}${BROKEN_CLAIM_INFIX}${token}`;
  try {
    fs.renameSync(path, aside);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return;
    throw error;
  }
  let same = false;
  try {
    const moved = inspect(aside);
    same = moved !== undefined && moved.ino === observed.ino && moved.raw === observed.raw;
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
  // Recursive: what sat at a claim path may be a directory (claim names are the store's own).
  fs.rmSync(aside, { force: true, recursive: true });
}

/**
 * Removes a claim left by a crash (a record nobody updates again would keep
 * it forever) when it is stale without watching (`staleAtOnce`). Safe while
 * others work: it uses the same takeover as `takeClaim`.
 */
export function sweepClaim(path: string, machine: Machine): void {
  try {
    const holder = inspect(path);
    if (holder !== undefined && staleAtOnce(holder, machine)) breakClaim(path, holder, randomToken());
  } catch {
    // Raced with its holder or another sweeper: it is their file now.
  }
}

/**
 * Removes a claim file that was being created (`*.pending.new-*`) when its
 * creator is gone or it is older than the grace. Removing one is always
 * safe: its creator's `link` then fails and it tries again (claim.md).
 */
export function sweepNewClaim(path: string, machine: Machine): void {
  try {
    const holder = inspect(path);
    if (holder === undefined) return;
    const old = machine.fileClockNow() - holder.mtimeMs >= UNREADABLE_CLAIM_GRACE_MS;
    if (old || staleAtOnce(holder, machine)) fs.rmSync(path, { force: true, recursive: true });
  } catch {
    // Already gone.
  }
}

/**
 * Removes a takeover leftover (`*.pending.broken-*`) once it is older than
 * the grace. Its breaker needs it only within `breakClaim`, which never
 * yields (all synchronous), so one this old belongs to a breaker that died;
 * and removing one early is still safe: the breaker then cannot give back a
 * claim it moved by mistake, whose holder finds its claim gone before
 * committing and tries again.
 */
export function sweepBroken(path: string, machine: Machine): void {
  try {
    if (machine.fileClockNow() - fs.lstatSync(path).mtimeMs >= UNREADABLE_CLAIM_GRACE_MS) {
      fs.rmSync(path, { force: true, recursive: true });
    }
  } catch {
    // Already gone.
  }
}
