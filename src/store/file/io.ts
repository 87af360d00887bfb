/**
 * The file-system calls that can wait for the disk, as promises over the
 * callback API (lighter than `fs/promises` file handles). They run on
 * libuv's thread pool on purpose: an fsync, a rename or an unlink can wait
 * for a journal commit on a busy disk, and a synchronous call would stall
 * every other operation of the process for that long. Reads of small files,
 * and writes into a claim file already created (claim.ts), stay
 * synchronous: page cache only, several times cheaper than a thread-pool
 * round trip.
 */
import * as fs from 'node:fs';

type Callback<T> = (error: NodeJS.ErrnoException | null, value: T) => void;

function call<T>(start: (callback: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, value) => (error ? reject(error) : resolve(value))));
}

export const openFile = (path: string, flags: string, mode?: number): Promise<number> =>
  call((cb) => fs.open(path, flags, mode, cb));

export const closeFile = (fd: number): Promise<void> => call((cb) => fs.close(fd, (error) => cb(error, undefined)));

export const fsyncFile = (fd: number): Promise<void> => call((cb) => fs.fsync(fd, (error) => cb(error, undefined)));

export const renameFile = (from: string, to: string): Promise<void> =>
  call((cb) => fs.rename(from, to, (error) => cb(error, undefined)));

export const unlinkFile = (path: string): Promise<void> =>
  call((cb) => fs.unlink(path, (error) => cb(error, undefined)));

/** Writes all of `bytes` at file offset `position`, synchronously (see claim.ts for when). */
export function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset, position + offset);
}

/** Writes all of `bytes` at file offset `position`. */
export async function writeAt(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const at = position + offset;
    offset += await call<number>((cb) => fs.write(fd, bytes, offset, bytes.length - offset, at, cb));
  }
}

export function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}
