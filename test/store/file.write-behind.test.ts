/**
 * The write-behind pass of an exclusive file store (write-behind.ts), on its
 * own: its file calls run on the thread pool, so the directory may be taken
 * over while one of them runs. The pass asks whether it still owns the
 * directory again once the file is open, before it writes. The owner check
 * is injected: `owned` answers yes a given number of times, then no.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteBehind } from '../../src/store/file/write-behind.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';

afterEach(removeTempDirs);

/** A pass over `dir` whose owner check says yes `yes` times, then no. */
function writeBehindIn(dir: string, yes: number) {
  let checks = 0;
  return new WriteBehind({
    dir,
    journalFlushed: () => Promise.resolve(),
    inQueue: (_name, task) => task(),
    quarantineOdd: () => Promise.reject(new Error('no odd file in this test')),
    owned: () => ++checks <= yes,
    runtime: createFakeRuntime(),
  });
}

describe('write-behind: a pass that loses the directory while a file opens', () => {
  it('writes the version into its file, in place, while it owns the directory', async () => {
    const dir = tempDir();
    fs.writeFileSync(join(dir, 'r1'), 'an older and longer version of the record');
    const behind = writeBehindIn(dir, Number.POSITIVE_INFINITY);
    behind.set('r1', { text: 'new version', rev: 2 });
    await behind.flush();
    expect(fs.readFileSync(join(dir, 'r1'), 'utf8')).toBe('new version');
    expect(behind.size).toBe(0);
    expect(behind.written).toBe(1);
  });

  it('writes nothing into the file when the directory is taken over while the file opens', async () => {
    const dir = tempDir();
    fs.writeFileSync(join(dir, 'r1'), 'the new owner’s version');
    // Yes at the start of the pass and before the open; no after it.
    const behind = writeBehindIn(dir, 2);
    behind.set('r1', { text: 'a stale version', rev: 2 });
    await expect(behind.flush()).rejects.toThrow(/no longer owned/);
    expect(fs.readFileSync(join(dir, 'r1'), 'utf8')).toBe('the new owner’s version');
    // Kept: not written, so not dropped.
    expect(behind.get('r1')?.text).toBe('a stale version');
  });
});
