/**
 * Key ↔ file name mapping for the file store, and what each directory entry
 * of the store is.
 *
 * Idempotency keys use `[A-Za-z0-9_\-.:]`, but a file name must also survive
 * the file systems our users run on:
 * - case-insensitive ones (macOS APFS, Windows NTFS) would merge `Ab` and
 *   `ab` into one file, so upper-case letters are escaped;
 * - `:` is illegal on Windows, and a leading `.` hides the file (and `.`/`..`
 *   are not names at all), so both are escaped;
 * - Windows reserves device names (`con`, `nul`, `com1`, ...) even with an
 *   extension, so their first letter is escaped.
 *
 * The escape is `%XX` (the UTF-8 bytes, like URL encoding), which never
 * occurs in a key, so decoding is exact. Opaque (uuid) and derived keys are
 * lower-case and come out unchanged. A name that would exceed what file
 * systems allow (255 bytes, minus room for our suffixes) is replaced by a
 * hash; `list()` then learns the key from the record itself.
 *
 * The store's own files. Every entry of the record directory is
 *
 *   <base>.json                          a record
 *   <base>.json.pending                  its claim (claim.ts)
 *   <base>.json.pending.new-<token>      a claim being created by an earlier
 *                                        version (claim.md): swept
 *   <base>.json.pending.broken-<token>   a claim being taken over (claim.ts)
 *   journal/, quarantine/                directories (no `.json` suffix)
 *
 * so every file that is not a record starts with `<record>.pending`. The
 * marker `.pending` is therefore reserved: in a key, a `.` that starts
 * `pending` is escaped (`%2E`), and `.pending` occurs in a file name only
 * where the store put it. That one escape is enough: the `.new-` and
 * `.broken-` markers exist only after `.pending`, and a record name always
 * ends with `.json` while no other file of the store does. `parseFileName`
 * reads names by that structure (suffixes, not substrings), so a key such as
 * `invoice.json.pending.broken-7` is a record like any other.
 *
 * Only keys that contain `.pending` got a new name with that escape; every
 * other key keeps the name it always had, so stored records stay where they
 * are. A record under the name an older version gave its key (`legacy`) is
 * still read, and the store moves it to its current name (store.ts).
 */
import { createHash } from 'node:crypto';

/** Suffix of every record file. Claim (temp) files and anything else never end with it. */
export const RECORD_SUFFIX = '.json';
/** `<record>.pending`: the claim and temp file of an update in progress (see claim.ts). */
export const PENDING_SUFFIX = '.pending';
/** `<record>.pending.new-<token>`: a claim file an earlier version wrote before linking it into place (claim.md). */
export const NEW_CLAIM_INFIX = '.new-';
/** `<record>.pending.broken-<token>`: a stale claim being taken over. */
export const BROKEN_CLAIM_INFIX = '.broken-';
/** Prefix of hashed names; `=` is never produced by the escaping. */
const HASHED_PREFIX = '=';
/** Longest escaped key kept readable; longer ones are hashed (255-byte name limit, with room for suffixes). */
const MAX_READABLE = 200;

const PLAIN = /^[a-z0-9_-]$/;
/** Keys that need no escaping at all (every opaque and derived key): the common, fast path. */
const PLAIN_KEY = /^[a-z0-9_-][a-z0-9_.-]*$/;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;
/** The reserved marker, as it would appear in a key (see the top of this file). */
const RESERVED = PENDING_SUFFIX;
const CLAIM_DEBRIS = /^(.+\.json)\.pending(?:\.(new|broken)-[0-9a-z]+)?$/;
const encoder = new TextEncoder();

function escapeChar(char: string): string {
  let out = '';
  for (const byte of encoder.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** The name `key` is filed under; `reserve` escapes the reserved marker (false: what older versions wrote). */
function nameFor(key: string, reserve: boolean): string {
  if (key.length === 0) throw new TypeError('an operation key must not be empty');
  const marked = reserve && key.includes(RESERVED);
  if (key.length <= MAX_READABLE && !marked && PLAIN_KEY.test(key) && !WINDOWS_DEVICE.test(key)) {
    return key + RECORD_SUFFIX;
  }
  let out = '';
  let index = 0;
  for (const char of key) {
    const reservedDot = marked && char === '.' && key.startsWith(RESERVED, index);
    out += PLAIN.test(char) || (char === '.' && index > 0 && !reservedDot) ? char : escapeChar(char);
    index += char.length;
  }
  if (WINDOWS_DEVICE.test(out)) out = escapeChar(out.charAt(0)) + out.slice(1);
  if (out.length > MAX_READABLE) out = HASHED_PREFIX + createHash('sha256').update(key).digest('hex');
  return out + RECORD_SUFFIX;
}

/** The file name (without directory) that holds the record of `key`. */
export function fileNameFor(key: string): string {
  return nameFor(key, true);
}

/**
 * The name an older version filed `key` under, when it differs from
 * `fileNameFor(key)` (only keys containing `.pending`); else undefined.
 */
export function legacyFileNameFor(key: string): string | undefined {
  if (!key.includes(RESERVED)) return undefined;
  const legacy = nameFor(key, false);
  return legacy === nameFor(key, true) ? undefined : legacy;
}

export type ParsedName =
  /** A record file whose name spells its key (`legacy`: the name an older version gave it). */
  | { kind: 'record'; key: string; legacy: boolean }
  /** A record file with a hashed name: the key is only known from its content. */
  | { kind: 'hashed' }
  /** The claim (temp) file of `record`: never read as a record. */
  | { kind: 'pending'; record: string }
  /** A claim file being created by an earlier version (claim.md), or left by a creator that died. */
  | { kind: 'new-claim' }
  /** A claim being taken over, or left by a takeover that crashed. */
  | { kind: 'broken' }
  | { kind: 'other' };

/** Classifies a directory entry of the store directory. */
export function parseFileName(name: string): ParsedName {
  // A record name ends with `.json`, and no other file of the store does: look no further.
  if (name.endsWith(RECORD_SUFFIX)) return parseRecordName(name);
  const debris = CLAIM_DEBRIS.exec(name);
  if (debris === null) return { kind: 'other' };
  if (debris[2] === 'new') return { kind: 'new-claim' };
  if (debris[2] === 'broken') return { kind: 'broken' };
  return { kind: 'pending', record: debris[1] as string };
}

function parseRecordName(name: string): ParsedName {
  const base = name.slice(0, -RECORD_SUFFIX.length);
  if (name.startsWith('.') || base.length === 0) return { kind: 'other' };
  if (base.startsWith(HASHED_PREFIX)) return /^=[0-9a-f]{64}$/.test(base) ? { kind: 'hashed' } : { kind: 'other' };
  let key: string;
  try {
    key = decodeURIComponent(base);
  } catch {
    return { kind: 'other' };
  }
  // Only names this module could have written count: anything else is not ours.
  if (fileNameFor(key) === name) return { kind: 'record', key, legacy: false };
  if (legacyFileNameFor(key) === name) return { kind: 'record', key, legacy: true };
  return { kind: 'other' };
}

/**
 * The record's key belongs in this file (guards against files copied or
 * renamed by hand); the name an older version gave the key counts too, so
 * such a record stays readable until it is moved to its current name.
 */
export function belongsTo(name: string, key: string): boolean {
  return key.length > 0 && (fileNameFor(key) === name || legacyFileNameFor(key) === name);
}
