/**
 * The file name of a journal segment: what it says of its writer (host,
 * pid, journal token, boot, start time, and whether it is an exclusive
 * store's), read by recovery and by the pruning of removed records, and the
 * name of a new one. The layout of the name is described at the top of
 * segments.ts.
 */
import type { Machine } from './machine.js';
import { SEGMENT_SUFFIX } from './segment-names.js';

/** Before the suffix, in the name of a segment of an exclusive store. */
const BEHIND_INFIX = '.behind';

/** What a segment's name says of its writer (see the top of segments.ts). */
export interface SegmentName {
  host: string;
  pid: number;
  token: string;
  /** The boot it was written in; undefined where the system has no boot id, and in older names. */
  boot: string | undefined;
  /** When it was started, ms on the wall clock; undefined in older names. */
  startedAtMs: number | undefined;
  /** Written by an exclusive store, whose record files lag its journal: always replayed (recovery.ts). */
  behind: boolean;
}

// `.resync` before `.log`: a segment a failed checkpoint marked (checkpoint.ts).
// `.behind` before those: a segment of an exclusive store (write-behind.ts), which versions before it do not
// parse and so leave alone.
const SEGMENT_NAME =
  /^([0-9a-f]+)-(\d+)-([0-9a-f]+)(?:-b([0-9a-f]+))?(?:-t(\d+))?\.(\d+)(\.behind)?(?:\.resync)?\.log$/;

/** The parts of a segment's name; undefined for a name no journal writes. */
export function parseSegmentName(name: string): SegmentName | undefined {
  const match = SEGMENT_NAME.exec(name);
  if (match === null) return undefined;
  const [, host = '', pid, token = '', boot, startedAt, , behind] = match;
  return {
    host,
    pid: Number(pid),
    token,
    boot,
    startedAtMs: startedAt === undefined ? undefined : Number(startedAt),
    behind: behind !== undefined,
  };
}

/** The name of a new segment of the journal `token` of this process on `machine`, its `sequence`-th. */
export function newSegmentName(machine: Machine, token: string, sequence: number, behind: boolean): string {
  const boot = machine.bootId();
  const writer = `${machine.hostId()}-${process.pid}-${token}${boot === undefined ? '' : `-b${boot}`}`;
  return `${writer}-t${Math.floor(machine.fileClockNow())}.${sequence}${behind ? BEHIND_INFIX : ''}${SEGMENT_SUFFIX}`;
}
