/**
 * The machine as the file store sees it: who this process is, when this
 * machine booted, and whether another process is still alive. Lock files
 * and journal segments carry the host and pid of their writer, so a process
 * can tell "held by a live process" from "left behind by a crash" at once,
 * instead of waiting for a timeout.
 *
 * This is the only module of oncely that reads the machine (host name, pid
 * namespace, machine id, uptime, boot id, other processes). Everything else
 * asks a `Machine`, which a store takes as an option: a test injects one and
 * never depends on the machine it runs on (a CI runner booted a minute ago,
 * a container's pid 1). test/architecture/machine.test.ts keeps it so.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname, uptime } from 'node:os';
import { systemRuntime } from '../../runtime.js';

/**
 * What the file store needs to know of the machine it runs on. Injected
 * with `fileStore({ machine })`; each part left out is the system's.
 */
export interface Machine {
  /**
   * A short, file-name-safe id of the place whose pids this process can
   * check (see `hostIdOf`). Claims and journal segments carry it.
   */
  hostId(): string;
  /** Whether a writer named `host` runs where this process can check its pid. */
  isCheckableHost(host: string): boolean;
  /** When this machine booted, in ms on the file clock (±1 s): older files belong to no living process. */
  bootedAtMs(): number;
  /** A short id of this boot (Linux's `boot_id`), or `undefined` where there is none. */
  bootId(): string | undefined;
  /** False only when process `pid` of this host certainly does not exist. */
  pidAlive(pid: number): boolean;
  /**
   * The clock that stamps file times (mtime): the operating system's wall
   * clock. A file's age is judged by it, never by an injected runtime's
   * clock, which may be virtual (a test's) and would misjudge every file.
   */
  fileClockNow(): number;
}

/** Where the system keeps its machine id and boot id. */
export const MACHINE_ID_PATH = '/etc/machine-id';
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

/** What the system machine is read from: the OS and its files. A test gives fake ones. */
export interface MachineSources {
  hostname(): string;
  /** Seconds since boot. */
  uptimeS(): number;
  /** A file's text; throws where there is none. */
  readText(path: string): string;
  /** A link's target; throws where there is none. */
  readLink(path: string): string;
  /** `process.kill(pid, 0)`. */
  signal0(pid: number): void;
  /** This process's pid. */
  pid: number;
  now(): number;
}

const SYSTEM_SOURCES: MachineSources = {
  hostname,
  uptimeS: uptime,
  readText: (path) => readFileSync(path, 'utf8'),
  readLink: (path) => readlinkSync(path),
  signal0: (pid) => {
    process.kill(pid, 0);
  },
  pid: process.pid,
  now: () => systemRuntime.now(),
};

/** A machine read from `sources`, each part computed on first use: importing the module does no work. */
export function machineFromSources(sources: MachineSources): Machine {
  let hostIdMemo: string | undefined;
  /** The id an earlier version gave this host, when it is one this process can check; `null` when not. */
  let legacyIdMemo: string | null | undefined;
  let bootedAtMemo: number | undefined;
  let bootIdMemo: string | null | undefined;
  const orEmpty = (read: () => string): string => {
    try {
      return read().trim();
    } catch {
      return '';
    }
  };
  const pidNamespace = (): string => orEmpty(() => sources.readLink('/proc/self/ns/pid'));
  return {
    hostId() {
      hostIdMemo ??= hostIdOf(
        sources.hostname(),
        pidNamespace(),
        orEmpty(() => sources.readText(MACHINE_ID_PATH)),
      );
      return hostIdMemo;
    },
    isCheckableHost(host) {
      // Also true for the id earlier versions wrote (the host name's alone) when this process runs in the
      // initial pid namespace, as those versions' writers on this host did unless they were in containers:
      // so the journals an upgrade finds are still settled. Computed once: recovery asks for every segment.
      legacyIdMemo ??= pidNamespace() === INITIAL_PID_NAMESPACE ? hostIdOf(sources.hostname(), '') : null;
      return checkableFrom(host, this.hostId(), legacyIdMemo ?? '', legacyIdMemo !== null);
    },
    bootedAtMs() {
      bootedAtMemo ??= sources.now() - sources.uptimeS() * 1_000 - 1_000;
      return bootedAtMemo;
    },
    bootId() {
      bootIdMemo ??= bootIdOf(orEmpty(() => sources.readText(BOOT_ID_PATH)));
      return bootIdMemo ?? undefined;
    },
    pidAlive(pid) {
      if (!Number.isInteger(pid) || pid <= 0) return false;
      if (pid === sources.pid) return true;
      try {
        sources.signal0(pid);
        return true;
      } catch (error) {
        // EPERM: it exists, under another user.
        return (error as NodeJS.ErrnoException).code === 'EPERM';
      }
    },
    fileClockNow: () => sources.now(),
  };
}

/** The machine this process runs on. */
export const systemMachine: Machine = machineFromSources(SYSTEM_SOURCES);

/** `machine` with the system's parts where it has none (`undefined` → the system's). */
export function machineOf(machine: Partial<Machine> | undefined): Machine {
  if (machine === undefined) return systemMachine;
  const whole = { ...systemMachine, ...machine };
  // `isCheckableHost` of the system asks `this.hostId()`: an injected host id is then the one it checks.
  return { ...whole, isCheckableHost: machine.isCheckableHost ?? systemMachine.isCheckableHost.bind(whole) };
}

/** `isCheckableHost` from its parts: this process's id, the id an earlier version gave it, and its namespace. */
export function checkableFrom(host: string, id: string, legacyId: string, initialNamespace: boolean): boolean {
  return host === id || (initialNamespace && host === legacyId);
}

/** The initial pid namespace's name on every Linux kernel (`PROC_PID_INIT_INO`). */
const INITIAL_PID_NAMESPACE = 'pid:[4026531836]';

/**
 * `hostId` from its parts (each empty where the system has none): the host
 * name, the pid namespace and the machine id. Two containers that share a
 * host name (host networking, a fixed `hostname:`) and a store directory
 * each run their own pid 1: by host name alone, each would take the other's
 * live journal and claims for its own dead ones. The machine id tells apart
 * two machines that share a host name and a store directory (a network file
 * system) while both run in the initial pid namespace, which has the same
 * name on every Linux kernel.
 */
export function hostIdOf(host: string, pidNamespace: string, machine = ''): string {
  const hash = createHash('sha256').update(host);
  // Without a namespace nor a machine id, the id is the host name's alone (as in earlier versions).
  if (pidNamespace !== '' || machine !== '') hash.update(`\0${pidNamespace}\0${machine}`);
  return hash.digest('hex').slice(0, 8);
}

/**
 * Linux's `boot_id` text, shortened, or null. Journal segments carry it: a
 * segment of another boot is one a power cut may have left, whatever the
 * clocks say (a machine that restarts within a second, or boots with its
 * clock behind until NTP sets it, makes file times useless for that).
 */
export function bootIdOf(text: string): string | null {
  const id = text.trim().replace(/-/g, '');
  return /^[0-9a-f]{32}$/.test(id) ? id.slice(0, 12) : null;
}
