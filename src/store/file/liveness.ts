/**
 * Who is this process, and is another one still alive? Lock files and temp
 * file names carry the host and pid of their writer, so a process can tell
 * "held by a live process" from "left behind by a crash" at once, instead
 * of waiting for a timeout.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname, uptime } from 'node:os';
import { systemRuntime } from '../../runtime.js';

let hostIdMemo: string | undefined;

/**
 * A short, file-name-safe id of the place whose pids this process can
 * check: its host name, its pid namespace and its machine id. Two
 * containers that share a host name (host networking, a fixed `hostname:`)
 * and a store directory each run their own pid 1: by host name alone, each
 * would take the other's live journal and claims for its own dead ones.
 * Computed on first use: importing the module does no work.
 */
export function hostId(): string {
  hostIdMemo ??= hostIdOf(hostname(), pidNamespace(), machineId());
  return hostIdMemo;
}

/**
 * Whether a writer named `host` (in a journal segment's name) runs where
 * this process can check its pid. Also true for the id earlier versions
 * wrote (the host name's alone) when this process runs in the initial pid
 * namespace, as those versions' writers on this host did unless they were
 * in containers: so the journals an upgrade finds are still settled.
 */
export function isCheckableHost(host: string): boolean {
  // Computed once: recovery asks for every segment it lists.
  legacyIdMemo ??= pidNamespace() === INITIAL_PID_NAMESPACE ? hostIdOf(hostname(), '') : null;
  return checkableFrom(host, hostId(), legacyIdMemo ?? '', legacyIdMemo !== null);
}

/** The id an earlier version gave this host, when it is one this process can check; `null` when not. */
let legacyIdMemo: string | null | undefined;

/** `isCheckableHost` from its parts: this process's id, the id an earlier version gave it, and its namespace. */
export function checkableFrom(host: string, id: string, legacyId: string, initialNamespace: boolean): boolean {
  return host === id || (initialNamespace && host === legacyId);
}

/** The initial pid namespace's name on every Linux kernel (`PROC_PID_INIT_INO`). */
const INITIAL_PID_NAMESPACE = 'pid:[4026531836]';

/**
 * `hostId` from its parts (each empty where the system has none). The
 * machine id tells apart two machines that share a host name and a store
 * directory (a network file system) while both run in the initial pid
 * namespace, which has the same name on every Linux kernel.
 */
export function hostIdOf(host: string, pidNamespace: string, machine = ''): string {
  const hash = createHash('sha256').update(host);
  // Without a namespace nor a machine id, the id is the host name's alone (as in earlier versions).
  if (pidNamespace !== '' || machine !== '') hash.update(`\0${pidNamespace}\0${machine}`);
  return hash.digest('hex').slice(0, 8);
}

/** `/etc/machine-id` (systemd's, also in most containers' images), or ''. */
function machineId(): string {
  try {
    return readFileSync('/etc/machine-id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** Linux's pid namespace of this process (`pid:[4026531836]`), or '' where there is none to read. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

/**
 * The clock that stamps file times (mtime): the operating system's wall
 * clock. A file's age is judged by this clock and never by an injected
 * runtime's, which may be virtual (a test's) and would misjudge every file.
 */
export function fileClockNow(): number {
  return systemRuntime.now();
}

let bootedAtMemo: number | undefined;

/**
 * When this machine booted (ms since epoch on the file clock, ±1 s): files
 * older than that belong to no living process. Computed on first use.
 */
export function bootedAtMs(): number {
  bootedAtMemo ??= fileClockNow() - uptime() * 1_000 - 1_000;
  return bootedAtMemo;
}

let bootIdMemo: string | null | undefined;

/**
 * A short id of this boot of the machine (Linux's `boot_id`), or
 * `undefined` where there is none. Journal segments carry it: a segment of
 * another boot is one a power cut may have left, whatever the clocks say
 * (a machine that restarts within a second, or boots with its clock behind
 * until NTP sets it, makes file times useless for that).
 */
export function bootId(): string | undefined {
  if (bootIdMemo === undefined) {
    try {
      const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replace(/-/g, '');
      bootIdMemo = /^[0-9a-f]{32}$/.test(id) ? id.slice(0, 12) : null;
    } catch {
      bootIdMemo = null;
    }
  }
  return bootIdMemo ?? undefined;
}

/**
 * True unless the process certainly does not exist. Only meaningful for a
 * pid of this host (`hostId()`); `EPERM` means it exists under another user.
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
  // The UUID's first 12 hex digits (all random: its version digit comes later), without a regex's copies.
  const uuid = globalThis.crypto.randomUUID();
  return uuid.slice(0, 8) + uuid.slice(9, 13);
}
