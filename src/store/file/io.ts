/**
 * The file-system calls that can wait for the disk, as promises over the
 * callback API (lighter than `fs/promises` file handles). They run on
 * libuv's thread pool on purpose: an fsync, a rename or an unlink can wait
 * for a journal commit on a busy disk, and a synchronous call would stall
 * every other operation of the process for that long. Reads of small files,
 * and writes into a claim file already created (claim.ts), stay
 * synchronous: page cache only, several times cheaper than a thread-pool
 * round trip.
 *
 * Every read of a file the store did not create itself (a record, a claim,
 * a quarantined file) goes through `readRegular`: something else can sit at
 * such a path (a FIFO, a directory, a device), and a plain read of a FIFO
 * blocks until some writer opens it, which would stall the whole process.
 */
import * as fs from 'node:fs';
import { sep } from 'node:path';

/**
 * `dir` ready to have an entry name appended (`prefix + name`): `join`'s
 * result for a resolved directory and a plain name, without the
 * normalisation `join` allocates for on every call (several per write).
 */
export function entryPrefix(dir: string): string {
  return dir.endsWith(sep) ? dir : dir + sep;
}

type Callback<T> = (error: NodeJS.ErrnoException | null, value: T) => void;

function call<T>(start: (callback: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value))));
}

export const openFile = (path: string, flags: string | number, mode?: number): Promise<number> =>
  call((cb) => fs.open(path, flags, mode, cb));

export const closeFile = (fd: number): Promise<void> => call((cb) => fs.close(fd, (error) => cb(error, undefined)));

export const fsyncFile = (fd: number): Promise<void> => call((cb) => fs.fsync(fd, (error) => cb(error, undefined)));

export const truncateFile = (fd: number, length: number): Promise<void> =>
  call((cb) => fs.ftruncate(fd, length, (error) => cb(error, undefined)));

export const renameFile = (from: string, to: string): Promise<void> =>
  call((cb) => fs.rename(from, to, (error) => cb(error, undefined)));

/** Creates `to` as another name of `from`; fails with EEXIST, never replaces (an atomic exclusive create). */
export const linkFile = (from: string, to: string): Promise<void> =>
  call((cb) => fs.link(from, to, (error) => cb(error, undefined)));

export const unlinkFile = (path: string): Promise<void> =>
  call((cb) => fs.unlink(path, (error) => cb(error, undefined)));

/** Writes all of `bytes` at file offset `position`, synchronously (see claim.ts for when). */
function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset, position + offset);
}

/**
 * Writes all of `text` (UTF-8) at file offset `position`, or at the end of
 * a file opened with `O_APPEND` when `position` is null, synchronously.
 * Resolves with its length in bytes. Handed to the kernel from the string
 * itself: no Buffer copied per write; only a short write (which a regular
 * file does not do) encodes the rest.
 */
export function writeTextSync(fd: number, text: string, position: number | null): number {
  const written = fs.writeSync(fd, text, position, 'utf8');
  const length = Buffer.byteLength(text, 'utf8');
  if (written < length) {
    const rest = Buffer.from(text, 'utf8').subarray(written);
    if (position === null) appendAllSync(fd, rest);
    else writeAllSync(fd, rest, position + written);
  }
  return length;
}

/** Writes all of `bytes` at file offset `position`. */
export async function writeAt(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const at = position + offset;
    offset += await call<number>((cb) => fs.write(fd, bytes, offset, bytes.length - offset, at, cb));
  }
}

/**
 * `O_NONBLOCK` makes opening a FIFO return at once instead of waiting for a
 * writer (regular files ignore it). Windows has no FIFOs to fear, nor the flag.
 */
const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/** What is at a path the store reads. */
export type FileRead =
  | { kind: 'missing' }
  | { kind: 'text'; text: string; ino: number; size: number; mtimeMs: number }
  /** Not a regular file (`type` says what): never read, so it cannot block. */
  | { kind: 'odd'; type: string; ino: number; mtimeMs: number };

/**
 * Reads the regular file at `path` (UTF-8), synchronously: opened without
 * blocking, checked with `fstat`, and read only when it is a regular file
 * (see the top of this file). A symbolic link is followed, and judged by
 * what it points to.
 */
export function readRegular(path: string): FileRead {
  let fd: number;
  try {
    fd = fs.openSync(path, READ_FLAGS);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return { kind: 'missing' };
    // A socket cannot be opened (ENXIO); Windows refuses directories (EISDIR); a link loop (ELOOP).
    if (isErrno(error, 'ENXIO') || isErrno(error, 'EISDIR') || isErrno(error, 'ELOOP')) return oddAt(path);
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return { kind: 'odd', type: typeOf(stat), ino: stat.ino, mtimeMs: stat.mtimeMs };
    const text = fs.readFileSync(fd, 'utf8');
    return { kind: 'text', text, ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

function oddAt(path: string): FileRead {
  try {
    const stat = fs.lstatSync(path);
    return { kind: 'odd', type: typeOf(stat), ino: stat.ino, mtimeMs: stat.mtimeMs };
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return { kind: 'missing' };
    throw error;
  }
}

/** What a non-regular file is, in words for a quarantine report. */
export function typeOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'directory';
  if (stat.isFIFO()) return 'FIFO';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'device';
  if (stat.isSymbolicLink()) return 'symbolic link';
  return stat.isFile() ? 'file' : 'special file';
}

/** Opens `path` for reading without blocking on a FIFO (see `READ_FLAGS`), on the thread pool. */
export const openForReading = (path: string): Promise<number> => openFile(path, READ_FLAGS);

export function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}

/** Writes all of `bytes` at the end of `fd`, opened with `O_APPEND` (short writes continued), synchronously. */
function appendAllSync(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset, null);
}

/** `fdatasync`, as a promise. */
export function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}
