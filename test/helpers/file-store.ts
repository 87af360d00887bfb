/**
 * Helpers for file store tests: temp directories under os.tmpdir() that are
 * removed after each test, direct access to the files a store writes, and
 * the claim files other (dead, live, old) processes would leave.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileNameFor } from '../../src/store/file/names.js';
import { BOOTED_AT_MS, testMachine, uptimeMs } from './machine.js';

const made: string[] = [];

/** A fresh, empty directory under the OS temp dir; `removeTempDirs()` deletes it. */
export function tempDir(prefix = 'oncely-file-'): string {
  const dir = fs.mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Every regular file under `dir`, recursively (absolute paths). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Every directory under `dir`, itself included. */
export function dirsUnder(dir: string): string[] {
  const out = [dir];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...dirsUnder(join(dir, entry.name)));
  }
  return out;
}

/** Permission bits of a path (e.g. 0o600). */
export function modeOf(path: string): number {
  return fs.statSync(path).mode & 0o777;
}

/** The pid of a process that has exited (so it is certainly not alive). */
export function deadPid(): number {
  const result = spawnSync(process.execPath, ['-e', '']);
  if (result.pid === undefined) throw new Error('could not spawn');
  return result.pid;
}

/** Sets a file's times to `atMs` on the file clock (`testMachine.fileClockNow()`). */
export function stampAt(path: string, atMs: number): void {
  const then = new Date(atMs);
  fs.utimesSync(path, then, then);
}

/**
 * Sets a file's times to `ageMs` ago, which must fall after the (injected)
 * boot: a file older than the boot is one no living process holds, and a
 * test that meant "old" would test "before the boot" instead. Use
 * `afterBoot` for "as old as can be, this boot", `beforeBoot` for the other.
 */
export function agedBy(path: string, ageMs: number): void {
  if (ageMs >= uptimeMs() - 1_000) {
    throw new Error(`agedBy(${ageMs} ms) reaches back to the machine's boot (up ${uptimeMs()} ms): use afterBoot()`);
  }
  stampAt(path, testMachine.fileClockNow() - ageMs);
}

/** Sets a file's times to just after the (injected) boot: as old as a file of this boot can be. */
export function afterBoot(path: string): void {
  stampAt(path, BOOTED_AT_MS + 1_000);
}

/** Sets a file's times to before the (injected) boot: what a power cut leaves behind. */
export function beforeBoot(path: string): void {
  stampAt(path, BOOTED_AT_MS - 3_600_000);
}

/** The claim file of `key`'s record in the store at `dir`. */
export function claimPathOf(dir: string, key: string): string {
  return join(dir, `${fileNameFor(key)}.pending`);
}

/** A claim file as a holder leaves it: optional content, then its holder line. */
export function writeClaim(dir: string, key: string, holder: { host: string; pid: number }, content = ''): string {
  const path = claimPathOf(dir, key);
  fs.writeFileSync(path, `${content}${JSON.stringify({ ...holder, token: 'abcdef123456' })}\n`, { mode: 0o600 });
  return path;
}

/** Open file descriptors of this process (Linux: /proc), or undefined where that cannot be counted. */
export function openDescriptors(): number | undefined {
  try {
    return fs.readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}
