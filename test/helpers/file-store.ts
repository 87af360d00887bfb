/**
 * Helpers for file store tests: temp directories under os.tmpdir() that are
 * removed after each test, and direct access to the files a store writes.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
