/**
 * Key ↔ file name mapping for the file store.
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
 */
import { createHash } from 'node:crypto';

/** Suffix of every record file. Claim (temp) files and anything else never end with it. */
export const RECORD_SUFFIX = '.json';
/** `<record>.pending`: the claim and temp file of an update in progress (see claim.ts). */
export const PENDING_SUFFIX = '.pending';
/** `<record>.pending.broken-<token>`: a stale claim being taken over. */
const BROKEN_MARK = `${RECORD_SUFFIX}${PENDING_SUFFIX}.broken-`;
/** Prefix of hashed names; `=` is never produced by the escaping. */
const HASHED_PREFIX = '=';
/** Longest escaped key kept readable; longer ones are hashed (255-byte name limit, with room for suffixes). */
const MAX_READABLE = 200;

const PLAIN = /^[a-z0-9_-]$/;
/** Keys that need no escaping at all (every opaque and derived key): the common, fast path. */
const PLAIN_KEY = /^[a-z0-9_-][a-z0-9_.-]*$/;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;
const encoder = new TextEncoder();

function escapeChar(char: string): string {
  let out = '';
  for (const byte of encoder.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** The file name (without directory) that holds the record of `key`. */
export function fileNameFor(key: string): string {
  if (key.length === 0) throw new TypeError('an operation key must not be empty');
  if (key.length <= MAX_READABLE && PLAIN_KEY.test(key) && !WINDOWS_DEVICE.test(key)) return key + RECORD_SUFFIX;
  let out = '';
  let index = 0;
  for (const char of key) {
    out += PLAIN.test(char) || (char === '.' && index > 0) ? char : escapeChar(char);
    index += char.length;
  }
  if (WINDOWS_DEVICE.test(out)) out = escapeChar(out.charAt(0)) + out.slice(1);
  if (out.length > MAX_READABLE) out = HASHED_PREFIX + createHash('sha256').update(key).digest('hex');
  return out + RECORD_SUFFIX;
}

export type ParsedName =
  /** A record file whose name spells its key. */
  | { kind: 'record'; key: string }
  /** A record file with a hashed name: the key is only known from its content. */
  | { kind: 'hashed' }
  /** The claim (temp) file of `record`: never read as a record. */
  | { kind: 'pending'; record: string }
  /** A claim being taken over, or left by a takeover that crashed. */
  | { kind: 'broken' }
  | { kind: 'other' };

/** Classifies a directory entry of the store directory. */
export function parseFileName(name: string): ParsedName {
  if (name.includes(BROKEN_MARK)) return { kind: 'broken' };
  if (name.endsWith(RECORD_SUFFIX + PENDING_SUFFIX)) {
    return { kind: 'pending', record: name.slice(0, -PENDING_SUFFIX.length) };
  }
  if (!name.endsWith(RECORD_SUFFIX) || name.startsWith('.')) return { kind: 'other' };
  const base = name.slice(0, -RECORD_SUFFIX.length);
  if (base.startsWith(HASHED_PREFIX)) return /^=[0-9a-f]{64}$/.test(base) ? { kind: 'hashed' } : { kind: 'other' };
  try {
    const key = decodeURIComponent(base);
    // Only names this module could have written count: anything else is not ours.
    return fileNameFor(key) === name ? { kind: 'record', key } : { kind: 'other' };
  } catch {
    return { kind: 'other' };
  }
}

/** The record's key belongs in this file (guards against files copied or renamed by hand). */
export function belongsTo(name: string, key: string): boolean {
  return key.length > 0 && fileNameFor(key) === name;
}
