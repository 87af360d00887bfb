/**
 * Something other than a regular file where the store expects one of its
 * files (a directory, a FIFO): it is never read (a FIFO would block the
 * whole process), it is quarantined and reported, and every other record
 * keeps working. The FIFO case runs the store in a child process, so a read
 * that blocks shows as a child that had to be killed, not as a hung runner.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { QuarantineEntry } from '../../src/node.js';
import { sampleRecord } from '../../src/store.js';
import { agedBy, claimPathOf, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { disposeWorkerBuild, spawnWorker } from '../helpers/file-worker.js';
import { fileStore } from '../helpers/machine.js';

afterEach(removeTempDirs);
afterAll(disposeWorkerBuild);

const canMakeFifo = process.platform !== 'win32' && spawnSync('mkfifo', ['--version']).status === 0;

function mkfifo(path: string): void {
  fs.rmSync(path, { force: true });
  const result = spawnSync('mkfifo', ['-m', '600', path]);
  if (result.status !== 0) throw new Error(`mkfifo failed: ${result.stderr}`);
}

const brief = (entry: QuarantineEntry): string => `${entry.id}: ${entry.problems.join('; ')}`;

describe('fileStore: odd files where its files should be', () => {
  it('a directory at a record name is quarantined and reported; the rest keeps working', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    await store.put(sampleRecord('k3'));
    fs.mkdirSync(store.pathOf('k2'));
    fs.writeFileSync(join(store.pathOf('k2'), 'inside'), 'not a record');
    fs.mkdirSync(store.pathOf('k4'));
    const reports: string[] = [];
    store.onQuarantine((entry) => reports.push(brief(entry)));

    expect((await store.list()).map((r) => r.key).sort()).toEqual(['k1', 'k3']);
    expect(reports).toEqual([
      'k2: not a regular file but a directory: moved aside without reading it',
      'k4: not a regular file but a directory: moved aside without reading it',
    ]);
    expect((await store.quarantined()).map(brief).sort()).toEqual(reports);
    // Moved aside whole, contents and all: nothing is dropped.
    const [moved] = fs.readdirSync(join(dir, 'quarantine')).filter((name) => name.endsWith('-k2.json'));
    expect(fs.readFileSync(join(dir, 'quarantine', moved ?? '', 'inside'), 'utf8')).toBe('not a record');

    // The names are free again: the keys work like any other.
    expect(await store.get('k2')).toBeUndefined();
    await store.put(sampleRecord('k2', { epoch: 2 }));
    expect((await store.get('k2'))?.epoch).toBe(2);
    // A directory that turns up under a key being updated is moved aside by the update itself.
    fs.rmSync(store.pathOf('k3'));
    fs.mkdirSync(store.pathOf('k3'));
    expect((await store.update('k3', () => sampleRecord('k3', { epoch: 5 })))?.epoch).toBe(5);
    expect(reports).toHaveLength(3);
    expect((await store.list()).map((r) => [r.key, r.epoch]).sort()).toEqual([
      ['k1', 0],
      ['k2', 2],
      ['k3', 5],
    ]);
    await store.close();
  });

  it.skipIf(!canMakeFifo)(
    'a FIFO at a record or claim name never blocks: quarantined, reported, the rest works',
    async () => {
      const dir = tempDir();
      const setup = fileStore({ dir });
      for (const key of ['k1', 'k2', 'k3']) await setup.put(sampleRecord(key));
      await setup.close();
      // A FIFO where record k2 should be, and one where k3's claim would be (old enough to be broken at once).
      mkfifo(setup.pathOf('k2'));
      mkfifo(claimPathOf(dir, 'k3'));
      agedBy(claimPathOf(dir, 'k3'), 5_000);

      const worker = await spawnWorker({ mode: 'probe', dir, keys: ['k1', 'k2'], bump: ['k3'] });
      // A read that blocks on a FIFO never returns: the child is killed instead of the runner hanging.
      const watchdog = setTimeout(() => worker.kill(), 15_000);
      const exit = await worker.exited;
      clearTimeout(watchdog);
      expect({ code: exit.code, signal: exit.signal, stderr: exit.stderr }).toEqual({
        code: 0,
        signal: null,
        stderr: '',
      });
      const done = exit.lines.find((line) => line.startsWith('done '));
      const fifo = 'k2: not a regular file but a FIFO: moved aside without reading it';
      expect(JSON.parse(done?.slice(5) ?? '{}')).toEqual({
        listed: ['k1', 'k3'],
        got: { k1: 0, k2: null },
        bumped: { k3: 1 },
        reported: [fifo],
        quarantined: [fifo],
      });

      // This process reads the quarantine (a FIFO in it) without blocking too, and nothing of the claim is left.
      const store = fileStore({ dir });
      expect((await store.quarantined()).map(brief)).toEqual([fifo]);
      expect(fs.readdirSync(dir).sort()).toEqual(['journal', 'k1.json', 'k3.json', 'quarantine']);
      await store.close();
    },
  );
});
