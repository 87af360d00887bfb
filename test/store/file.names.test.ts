/**
 * The file store's key → file name mapping (names.ts): safe on every common
 * file system, exact both ways, stable for the keys stored today, and never
 * confused with the store's own files (claims, their temp files, takeover
 * leftovers, the journal and quarantine directories).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileNameFor, legacyFileNameFor, parseFileName } from '../../src/store/file/names.js';
import { sampleRecord } from '../../src/store.js';
import { seededRandom } from '../../src/testing.js';
import { agedBy, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

afterEach(removeTempDirs);

const keys = [
  'Ab9_-.:x',
  'ab9_-.:x',
  '.hidden',
  '..',
  'con',
  'CON',
  'nul.txt',
  'a:b:c',
  'k'.repeat(255),
  'K'.repeat(255),
  `${'k'.repeat(254)}K`,
  '5f0c2a5e-7d41-4c7a-9a3e-0b6c1f6f3b2d',
];

/** Every name the store gives its own files beside the record `name` (claim.md). */
const ownFilesOf = (name: string): string[] => [
  `${name}.pending`,
  `${name}.pending.new-0123456789ab`,
  `${name}.pending.broken-0123456789ab`,
];

/** Markers of the store's own files, and other pieces a key may contain that look like them. */
const PIECES = [
  '.json',
  '.pending',
  '.json.pending',
  '.pending.broken-',
  '.broken-7',
  '.new-0123456789ab',
  '.pending.new-',
  'journal',
  'quarantine',
  'recovery.pending',
  '.log',
  '=',
  '.',
  '..',
  'con',
  'PENDING',
  '.Pending',
  '%2E',
];
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-';

/** A random key of the documented alphabet, built from random runs and the pieces above. */
function randomKey(random: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  let key = '';
  const parts = 1 + Math.floor(random() * 6);
  for (let i = 0; i < parts; i++) {
    if (random() < 0.5) key += pick(PIECES).replace('%', '');
    else for (let n = 1 + Math.floor(random() * 8); n > 0; n--) key += pick([...ALPHABET]);
  }
  // Now and then a long one, hashed when its escaped form is too long.
  if (random() < 0.05) key = key.repeat(Math.ceil(190 / key.length));
  return key;
}

describe('fileStore: key → file name', () => {
  it('is safe on every common file system and maps back to the key', () => {
    const names = keys.map(fileNameFor);
    for (const [i, name] of names.entries()) {
      expect(name).toMatch(/^[A-Za-z0-9_\-.%=]+\.json$/);
      expect(name.startsWith('.')).toBe(false);
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255 - 40); // room for the claim suffixes
      expect(name).not.toMatch(/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i);
      const parsed = parseFileName(name);
      if (parsed.kind === 'record') expect(parsed.key).toBe(keys[i]);
      else expect(parsed.kind).toBe('hashed');
    }
    // Case-insensitive file systems must not merge two keys into one file.
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(keys.length);
  });

  it('keeps the names keys are stored under today (only keys containing ".pending" get a new one)', () => {
    // Pinned from the mapping before ".pending" was reserved: records stored by users live there.
    const pinned: Record<string, string> = {
      '5f0c2a5e-7d41-4c7a-9a3e-0b6c1f6f3b2d': '5f0c2a5e-7d41-4c7a-9a3e-0b6c1f6f3b2d.json',
      'Ab9_-.:x': '%41b9_-.%3Ax.json',
      'order-42.v2': 'order-42.v2.json',
      '.hidden': '%2Ehidden.json',
      con: '%63on.json',
      'tenant:acme:order:7': 'tenant%3Aacme%3Aorder%3A7.json',
      'a.json': 'a.json.json',
      'x.broken-7': 'x.broken-7.json',
      ['K'.repeat(255)]: '=965cb4c32966ed7274092691711fbc650e3e1ed9e49e79897f25248f5bb21290.json',
    };
    for (const [key, name] of Object.entries(pinned)) {
      expect(fileNameFor(key), key).toBe(name);
      expect(legacyFileNameFor(key), key).toBeUndefined();
    }
    expect(fileNameFor('invoice.json.pending.broken-7')).toBe('invoice.json%2Epending.broken-7.json');
    expect(legacyFileNameFor('invoice.json.pending.broken-7')).toBe('invoice.json.pending.broken-7.json');
  });

  it('property: for 20,000 random keys, name → key round-trips and no name is taken for the store’s own files', () => {
    const random = seededRandom(0x0ce1);
    const samples = [...keys, 'invoice.json.pending.broken-7', 'x.json.pending', 'y.pending.new-0123456789ab'];
    for (let i = 0; i < 20_000; i++) samples.push(randomKey(random));
    const distinct = [...new Set(samples)];
    const byName = new Map<string, string>();
    const failures: string[] = [];
    const fail = (key: string, what: string): void => void failures.push(`${JSON.stringify(key)}: ${what}`);
    for (const key of distinct) {
      const name = fileNameFor(key);
      const parsed = parseFileName(name);
      const roundTrips = parsed.kind === 'record' && parsed.key === key && !parsed.legacy;
      if (!roundTrips && !(parsed.kind === 'hashed' && name.length === 70))
        fail(key, `${name} parses as ${parsed.kind}`);
      // The reserved marker occurs only where the store puts it, and each own file is classified as such.
      if (name.includes('.pending')) fail(key, `${name} contains .pending`);
      const own = ownFilesOf(name).map((file) => parseFileName(file));
      if (own.map((p) => p.kind).join() !== 'pending,new-claim,broken')
        fail(key, `own files of ${name}: ${own.map((p) => p.kind)}`);
      if (own[0]?.kind === 'pending' && own[0].record !== name) fail(key, `claim of ${name} names ${own[0].record}`);
      // Never the name of a store directory, and two keys never share a name (not even case-insensitively).
      if (['journal', 'quarantine'].includes(name)) fail(key, `is a directory name: ${name}`);
      const other = byName.get(name.toLowerCase());
      if (other !== undefined) fail(key, `shares ${name} with ${JSON.stringify(other)}`);
      byName.set(name.toLowerCase(), key);
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(distinct.length).toBeGreaterThan(15_000);
    expect(distinct.some((key) => key.includes('.json.pending.broken-'))).toBe(true);
  });

  it('stores, lists and keeps a key that spells the store’s own markers (invoice.json.pending.broken-7)', async () => {
    const dir = tempDir();
    const store = fileStore({ dir, staleLockMs: 50 });
    const tricky = ['invoice.json.pending.broken-7', 'invoice.json.pending', 'a.pending.new-0123456789ab'];
    for (const key of tricky) await store.put(sampleRecord(key));
    // Old enough for every sweep of crash debris (staleLockMs, the claim grace).
    for (const name of fs.readdirSync(dir)) if (name.endsWith('.json')) agedBy(join(dir, name), 10_000);
    expect((await store.list()).map((r) => r.key).sort()).toEqual([...tricky].sort());
    expect((await store.list()).map((r) => r.key).sort()).toEqual([...tricky].sort());
    for (const key of tricky) expect((await store.get(key))?.key).toBe(key);
    expect(await store.quarantined()).toEqual([]);
  });

  it('reads a record filed under the name an older version gave its key, and moves it to its current name', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    const keyA = 'order-7.pending';
    const keyB = 'invoice.json.pending.broken-7';
    for (const key of [keyA, keyB]) {
      await store.put(sampleRecord(key, { epoch: 4 }));
      fs.renameSync(store.pathOf(key), join(dir, legacyFileNameFor(key) as string));
    }
    await store.close();
    const upgraded = fileStore({ dir });
    expect((await upgraded.list()).map((r) => [r.key, r.epoch]).sort()).toEqual([
      [keyB, 4],
      [keyA, 4],
    ]);
    expect((await upgraded.update(keyA, (r) => (r ? { ...r, epoch: 5 } : r)))?.epoch).toBe(5);
    expect((await upgraded.get(keyB))?.epoch).toBe(4);
    for (const key of [keyA, keyB]) {
      expect(fs.existsSync(upgraded.pathOf(key))).toBe(true);
      expect(fs.existsSync(join(dir, legacyFileNameFor(key) as string))).toBe(false);
    }
    expect(await upgraded.quarantined()).toEqual([]);
  });

  it('ignores files that are not its own', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    fs.writeFileSync(join(dir, 'README.txt'), 'hello');
    fs.writeFileSync(join(dir, 'Upper.json'), '{}'); // not a name fileStore writes
    expect((await store.list()).map((r) => r.key)).toEqual(['k1']);
    expect(await store.quarantined()).toEqual([]);
  });
});
