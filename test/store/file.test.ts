/**
 * The file store: validation and quarantine, durability and concurrency.
 * Names: file.names.test.ts; claims and crash debris: file.claims.test.ts;
 * odd files: file.odd.test.ts; the journal: file.journal.test.ts.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { fileStoreStats } from '../../src/store/file/store.js';
import { sampleRecord } from '../../src/store.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { disposeWorkerBuild, spawnWorker } from '../helpers/file-worker.js';
import { fileStore } from '../helpers/machine.js';

afterEach(removeTempDirs);
afterAll(disposeWorkerBuild);

const bump = (r: ReturnType<typeof sampleRecord> | undefined) =>
  r === undefined ? undefined : { ...r, epoch: r.epoch + 1 };

describe('fileStore: validation and quarantine', () => {
  it('quarantines a valid record filed under another key', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('a'));
    fs.copyFileSync(store.pathOf('a'), store.pathOf('b'));
    const reports: string[] = [];
    store.onQuarantine((entry) => reports.push(entry.id));
    expect(await store.get('b')).toBeUndefined();
    expect(reports).toEqual(['b']);
    const [entry] = await store.quarantined();
    expect(entry?.id).toBe('b');
    expect(entry?.problems.join()).toMatch(/another key/);
    expect(fs.readdirSync(join(dir, 'quarantine'))).toHaveLength(1);
    expect((await store.get('a'))?.key).toBe('a');
  });

  it('an update of a corrupt record quarantines it and sees no record', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    fs.writeFileSync(store.pathOf('k1'), '{"v":1,"key":"k1"');
    const seen: unknown[] = [];
    const result = await store.update('k1', (current) => {
      seen.push(current);
      return sampleRecord('k1', { epoch: 9 });
    });
    // The call whose result is written saw no record. (An earlier call may have seen the version this handle
    // wrote, as a compare-and-set that fails under the claim; never the corrupt text.)
    expect(seen.at(-1)).toBeUndefined();
    expect(seen.slice(0, -1)).toEqual(seen.slice(0, -1).map(() => sampleRecord('k1')));
    expect(result?.epoch).toBe(9);
    expect((await store.quarantined()).map((q) => q.id)).toEqual(['k1']);
  });

  it('an update resolves with the record exactly as a later read returns it, whatever JSON makes of its values', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    const odd: ((r: OperationRecord) => OperationRecord)[] = [
      (r) => ({ ...r, epoch: r.epoch + 1 }), // plain JSON: returned as is
      (r) => ({ ...r, lease: undefined }), // an optional field set to undefined: JSON drops it
      (r) => ({ ...r, meta: { zero: -0, gone: undefined, list: [1, undefined] } }), // -0, undefined, a hole
      (r) => ({ ...r, meta: { when: new Date(0), big: Number.NaN } as unknown as Record<string, never> }),
    ];
    for (const change of odd) {
      const updated = await store.update('k1', (r) => (r === undefined ? r : change(r)));
      const reread = fileStore({ dir: store.dir });
      expect(updated).toStrictEqual(await reread.get('k1'));
      await reread.close();
    }
    await store.close();
  });

  it('refuses to write a record that would fail validation on read', async () => {
    const store = fileStore({ dir: tempDir() });
    const bad = { ...sampleRecord('k1'), state: 'exploded' } as unknown as ReturnType<typeof sampleRecord>;
    await expect(store.put(bad)).rejects.toThrow(/invalid record/);
    await expect(store.update('k1', () => bad)).rejects.toThrow(/invalid record/);
    expect(await store.get('k1')).toBeUndefined();
  });
});

describe('fileStore: durability and concurrency', () => {
  it('group-commits journal flushes across concurrent writes', async () => {
    const store = fileStore({ dir: tempDir() });
    await Promise.all(Array.from({ length: 64 }, (_, i) => store.put(sampleRecord(`k${i}`))));
    const stats = fileStoreStats(store);
    expect(stats.commits).toBe(64);
    expect(stats.journalLines).toBe(64);
    expect(stats.journalFlushes).toBeLessThan(stats.commits / 4);
    expect(await store.list()).toHaveLength(64);
  });

  it('update is atomic across processes: 3 processes × 100 + this one × 100 increments', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('counter'));
    const workers = await Promise.all(
      [0, 1, 2].map(() => spawnWorker({ mode: 'increment', dir, key: 'counter', count: 100 })),
    );
    await Promise.all(Array.from({ length: 100 }, () => store.update('counter', bump)));
    const exits = await Promise.all(workers.map((w) => w.exited));
    expect(exits.map((e) => [e.code, e.stderr])).toEqual([
      [0, ''],
      [0, ''],
      [0, ''],
    ]);
    expect((await store.get('counter'))?.epoch).toBe(400);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.pending'))).toEqual([]);
  });

  it('close waits for pending writes; later calls reject', async () => {
    const store = fileStore({ dir: tempDir() });
    const writes = Array.from({ length: 10 }, (_, i) => store.put(sampleRecord(`k${i}`)));
    await store.close();
    await Promise.all(writes);
    await expect(store.get('k1')).rejects.toThrow(/closed/);
    const again = fileStore({ dir: store.dir });
    expect(await again.list()).toHaveLength(10);
  });

  it('rejects bad options naming the field', () => {
    expect(() => fileStore({ dir: '' })).toThrow(/`dir`/);
    expect(() => fileStore({ lockTimeoutMs: 0 })).toThrow(/`lockTimeoutMs`/);
    expect(() => fileStore({ staleLockMs: Number.NaN })).toThrow(/`staleLockMs`/);
  });
});
