/**
 * The write-behind pass of an exclusive file store (write-behind.ts), on its
 * own: its file calls run on the thread pool, so the directory may be taken
 * over while one of them runs. The pass asks whether it still owns the
 * directory before every call that changes a file, and stops at the first
 * "no". The owner check is injected: `owned` answers yes a given number of
 * times, then no.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteBehind } from '../../src/store/file/write-behind.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';

afterEach(removeTempDirs);

/** A pass over `dir` whose owner check says yes `yes` times, then no; counts the checks. */
function writeBehindIn(dir: string, yes: number) {
  const checks = { count: 0 };
  const behind = new WriteBehind({
    dir,
    journalFlushed: () => Promise.resolve(),
    inQueue: (_name, task) => task(),
    quarantineOdd: () => Promise.reject(new Error('no odd file in this test')),
    owned: () => ++checks.count <= yes,
    runtime: createFakeRuntime(),
  });
  return { behind, checks };
}

describe('write-behind: a pass that loses the directory mid-write', () => {
  it('writes the version into its file, in place, while it owns the directory', async () => {
    const dir = tempDir();
    fs.writeFileSync(join(dir, 'r1'), 'an older and longer version of the record');
    const { behind, checks } = writeBehindIn(dir, Number.POSITIVE_INFINITY);
    behind.set('r1', { text: 'new version', rev: 2 });
    await behind.flush();
    expect(fs.readFileSync(join(dir, 'r1'), 'utf8')).toBe('new version');
    expect(behind.size).toBe(0);
    expect(behind.written).toBe(1);
    // At the pass, before the open, before the write, before the truncation.
    expect(checks.count).toBe(4);
  });

  it('writes nothing into the file when the directory is taken over while the file opens', async () => {
    const dir = tempDir();
    fs.writeFileSync(join(dir, 'r1'), 'the new owner’s version');
    // Yes at the start of the pass and before the open; no after it.
    const { behind } = writeBehindIn(dir, 2);
    behind.set('r1', { text: 'a stale version', rev: 2 });
    await expect(behind.flush()).rejects.toThrow(/no longer owned/);
    expect(fs.readFileSync(join(dir, 'r1'), 'utf8')).toBe('the new owner’s version');
    // Kept: not written, so not dropped.
    expect(behind.get('r1')?.text).toBe('a stale version');
  });

  it('does not truncate the file when the directory is taken over while the version is written', async () => {
    const dir = tempDir();
    fs.writeFileSync(join(dir, 'r1'), 'a version longer than the one written behind');
    // Yes up to the write; no before the truncation.
    const { behind } = writeBehindIn(dir, 3);
    behind.set('r1', { text: 'short', rev: 2 });
    await expect(behind.flush()).rejects.toThrow(/no longer owned/);
    // The write that started under ownership went through; the truncation after the takeover did not.
    expect(fs.statSync(join(dir, 'r1')).size).toBe('a version longer than the one written behind'.length);
  });
});
