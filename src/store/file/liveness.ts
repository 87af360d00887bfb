/**
 * Who is this process, and is another one still alive? Lock files and temp
 * file names carry the host and pid of their writer, so a process can tell
 * "held by a live process" from "left behind by a crash" at once, instead
 * of waiting for a timeout.
 */
import { createHash } from 'node:crypto';
import { hostname, uptime } from 'node:os';

/** A short, file-name-safe id of this host (processes in other containers see another one). */
export const HOST_ID = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/** When this machine booted (ms since epoch, ±1 s): files older than that belong to no living process. */
export const BOOTED_AT = Date.now() - uptime() * 1_000 - 1_000;

/**
 * True unless the process certainly does not exist. Only meaningful for a
 * pid of this host (`HOST_ID`); `EPERM` means it exists under another user.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** 12 random hex characters: unique enough to tell two writers (or two lock generations) apart. */
export function randomToken(): string {
  return globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 12);
}
