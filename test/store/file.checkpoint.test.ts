/**
 * Checkpoints of journal segments (checkpoint.ts, segment-names.ts) and the
 * anchors of relaxed writes (segments.ts): what a checkpoint syncs comes
 * from the segment file, not from a list held in memory, and the anchors
 * are a bounded window. Store-level journal behaviour: file.journal.test.ts.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkpoint } from '../../src/store/file/checkpoint.js';
import { DirSync } from '../../src/store/file/durable.js';
import { forEachSegmentName } from '../../src/store/file/segment-names.js';
import { Segments } from '../../src/store/file/segments.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';

/** Every path the checkpoint opens to fsync (the real open runs too). */
const opened = vi.hoisted(() => [] as string[]);
vi.mock('../../src/store/file/io.js', async (importOriginal) => {
  const io = await importOriginal<typeof import('../../src/store/file/io.js')>();
  return {
    ...io,
    openForReading: (path: string) => {
      opened.push(path);
      return io.openForReading(path);
    },
  };
});

afterEach(() => {
  opened.length = 0;
  return removeTempDirs();
});

const line = (n: string, t = `{"key":"${n}"}\n{"rev":1}\n`): string => `${JSON.stringify({ n, r: 1, t })}\n`;

async function namesOf(path: string, chunkBytes?: number): Promise<string[]> {
  const names: string[] = [];
  await forEachSegmentName(
    path,
    async (name) => {
      names.push(name);
    },
    chunkBytes,
  );
  return names;
}

describe('journal segment names, read back from the file', () => {
  it('names every whole line in order, repeats included, across chunk boundaries', async () => {
    const dir = tempDir();
    const path = join(dir, 'segment.log');
    const text =
      line('a.json') +
      line('b.json', 'x'.repeat(300)) +
      `${JSON.stringify({ n: 'c.json', r: 2, d: 1 })}\n` +
      line('a.json') +
      // Not the order journal.ts writes: parsed in full.
      `${JSON.stringify({ r: 3, n: 'd.json', t: 'text' })}\n` +
      // An escape in the name: parsed in full, not cut at the backslash.
      `{"n":"e\\u002e.json","r":4,"t":"text"}\n` +
      'not json\n' +
      // A torn last line (the writer died mid-append): no newline, no name.
      '{"n":"torn.json","r":5,"t":"te';
    fs.writeFileSync(path, text);
    const expected = ['a.json', 'b.json', 'c.json', 'a.json', 'd.json', 'e..json'];
    expect(await namesOf(path)).toEqual(expected);
    // Lines longer than a chunk, and lines cut anywhere by chunk boundaries.
    for (const chunkBytes of [1, 7, 64, 301]) expect(await namesOf(path, chunkBytes)).toEqual(expected);
  });

  it('names nothing for a missing segment or one that is not a regular file', async () => {
    const dir = tempDir();
    expect(await namesOf(join(dir, 'gone.log'))).toEqual([]);
    fs.mkdirSync(join(dir, 'odd.log'));
    expect(await namesOf(join(dir, 'odd.log'))).toEqual([]);
  });
});

describe('checkpoint', () => {
  it('syncs each record its segment file names (once, however many lines), and the unwritten ones, then deletes the segment', async () => {
    const dir = tempDir();
    for (const name of ['a.json', 'b.json', 'u.json']) fs.writeFileSync(join(dir, name), `${name}\n`);
    const segment = join(dir, 'segment.log');
    // gone.json has a line but no file any more (removed since): nothing to sync, and no error.
    fs.writeFileSync(segment, line('a.json') + line('b.json') + line('a.json') + line('gone.json') + line('b.json'));
    await checkpoint(segment, new DirSync(dir), { unwritten: new Set(['u.json']) });
    expect(opened.map((path) => path.slice(dir.length + 1))).toEqual(['u.json', 'a.json', 'b.json', 'gone.json']);
    expect(fs.existsSync(segment)).toBe(false);
    for (const name of ['a.json', 'b.json', 'u.json'])
      expect(fs.readFileSync(join(dir, name), 'utf8')).toBe(`${name}\n`);
  });

  it('a segment it cannot read stays on disk for recovery', async () => {
    const dir = tempDir();
    // A symbolic link to itself: opening it fails (ELOOP), even for root.
    const segment = join(dir, 'segment.log');
    fs.symlinkSync('segment.log', segment);
    await expect(checkpoint(segment, new DirSync(dir))).rejects.toThrow(/ELOOP/);
    expect(fs.lstatSync(segment).isSymbolicLink()).toBe(true);
  });
});

describe('anchors of relaxed writes', () => {
  function segmentsIn(dir: string, anchorLimit: number): Segments {
    const journal = join(dir, 'journal');
    fs.mkdirSync(journal);
    return new Segments({
      dir: new DirSync(journal),
      records: new DirSync(dir),
      runtime: createFakeRuntime(),
      token: '0123456789ab',
      barrier: async () => undefined,
      flushing: () => false,
      onCheckpoint: () => undefined,
      anchorLimit,
    });
  }

  it('remember the last records flushed, up to the limit, oldest forgotten first', async () => {
    const segments = segmentsIn(tempDir(), 2);
    const segment = await segments.current();
    for (const name of ['a.json', 'b.json', 'a.json', 'c.json']) segments.anchor(name, segment);
    // a.json was flushed again after b.json: b.json is the oldest, and the one forgotten.
    expect(['a.json', 'b.json', 'c.json'].map((name) => segments.anchors(name))).toEqual([true, false, true]);
    await segments.close();
  });

  it('end when their segment breaks or its checkpoint starts', async () => {
    const segments = segmentsIn(tempDir(), 10);
    const first = await segments.current();
    segments.anchor('a.json', first);
    segments.anchor('b.json', first);
    first.broken = true;
    expect(segments.anchors('a.json')).toBe(false);
    const second = await segments.current();
    expect(second).not.toBe(first);
    segments.anchor('b.json', second);
    expect(segments.anchors('b.json')).toBe(true);
    // close() retires and checkpoints every segment.
    await segments.close();
    expect(second.checkpointing).toBe(true);
    expect(segments.anchors('b.json')).toBe(false);
  });
});
