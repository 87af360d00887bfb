/**
 * The file store's records validated once per text (parsed.ts), the
 * update's check of only the fields it changed (record-file.ts
 * `serialize`), and the pins of a large release (pinned.ts).
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { ParsedRecords } from '../../src/store/file/parsed.js';
import { serialize } from '../../src/store/file/record-file.js';
import { fileStoreStats } from '../../src/store/file/store.js';
import { sampleRecord } from '../../src/store.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

afterEach(removeTempDirs);

/** The file text of `record` as a store writes it (record line, then writer line). */
const fileText = (record: OperationRecord, rev = 1) =>
  `${JSON.stringify(record)}\n${JSON.stringify({ host: 'h', pid: 1, token: 't', rev })}\n`;

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

describe('ParsedRecords', () => {
  it('answers the same text from the cache, and checks any other text in full', () => {
    const parsed = new ParsedRecords();
    const name = 'k1.json';
    const text = fileText(sampleRecord('k1'));
    const first = parsed.check(name, text);
    const second = parsed.check(name, text);
    expect(first.ok && second.ok && first.record === second.record).toBe(true);
    expect(parsed.hits).toBe(1);
    // Same name, another text: a corrupt one fails, even right after a hit.
    const corrupt = parsed.check(name, '{"v":1,"key":"k1"\n');
    expect(corrupt.ok).toBe(false);
    const otherKey = parsed.check(name, fileText(sampleRecord('k2')));
    expect(otherKey.ok).toBe(false);
    expect(parsed.hits).toBe(1);
  });

  it('hands out records frozen all the way down', () => {
    const parsed = new ParsedRecords();
    const checked = parsed.check('k1.json', fileText(sampleRecord('k1')));
    expect(checked.ok && isDeepFrozen(checked.record)).toBe(true);
  });

  it('keeps a written record as a frozen copy that shares what it kept from the record it was computed from', () => {
    const parsed = new ParsedRecords();
    const checked = parsed.check('k1.json', fileText(sampleRecord('k1')));
    if (!checked.ok) throw new Error('sample record rejected');
    const from = checked.record;
    const next = {
      ...from,
      epoch: from.epoch + 1,
      attempts: [{ n: 1, owner: 'o', startedAt: 5, sent: 'maybe' as const }],
    };
    const text = fileText(next, 2);
    const kept = parsed.remember('k1.json', text, next, from);
    expect(kept).toEqual(next);
    expect(kept).not.toBe(next);
    expect(kept.request).toBe(from.request);
    expect(isDeepFrozen(kept)).toBe(true);
    // The caller's own object stays theirs: changing it changes nothing the next read of that text returns.
    (next.attempts[0] as { owner: string }).owner = 'changed';
    const again = parsed.check('k1.json', text);
    expect(again.ok && again.record === kept && again.record.attempts[0]?.owner === 'o').toBe(true);
  });
});

describe('serialize from a validated record', () => {
  it('still refuses an invalid value in a field the update changed', () => {
    const parsed = new ParsedRecords();
    const checked = parsed.check('k1.json', fileText(sampleRecord('k1')));
    if (!checked.ok) throw new Error('sample record rejected');
    const from = checked.record;
    const bad = [
      { ...from, state: 'exploded' },
      { ...from, attempts: [{ n: 0, owner: 'o', startedAt: 1, sent: 'maybe' }] },
      { ...from, extra: 1 },
      { ...from, epoch: -0 },
    ] as unknown as OperationRecord[];
    for (const record of bad) {
      let refused = false;
      try {
        const { stored } = serialize(record, from);
        // -0 is accepted by the schema but does not read back as itself: the parsed copy is returned instead.
        refused = stored !== record;
      } catch (error) {
        refused = error instanceof TypeError;
      }
      expect(refused).toBe(true);
    }
    const good = { ...from, epoch: 3 };
    expect(serialize(good, from).stored).toBe(good);
  });
});

describe('fileStore: records validated once per text', () => {
  it('refuses an update that makes a stored record invalid', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    await expect(
      store.update('k1', (r) => (r === undefined ? r : ({ ...r, state: 'exploded' } as unknown as OperationRecord))),
    ).rejects.toThrow(/invalid record/);
    expect((await store.get('k1'))?.state).toBe('pending');
    await store.close();
  });

  it('hands out frozen records: a caller cannot change what the next read returns', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    const read = (await store.get('k1')) as OperationRecord;
    expect(() => {
      (read as { epoch: number }).epoch = 7;
    }).toThrow(TypeError);
    expect((await store.get('k1'))?.epoch).toBe(0);
    await store.close();
  });

  it('a file replaced behind the handle is checked again, and quarantined when corrupt', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    expect((await store.get('k1'))?.key).toBe('k1');
    fs.writeFileSync(store.pathOf('k1'), `${JSON.stringify({ ...sampleRecord('k1'), state: 'exploded' })}\n`);
    expect(await store.get('k1')).toBeUndefined();
    expect((await store.quarantined()).map((q) => q.id)).toEqual(['k1']);
    await store.close();
  });

  it('a running record is read back from its pin and its kept parse; a final one from its file', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    await store.put(sampleRecord('k2'));
    await store.update('k1', (r) => (r === undefined ? r : { ...r, epoch: 1 }));
    await store.update('k2', (r) => (r === undefined ? r : { ...r, state: 'succeeded' }));
    const before = fileStoreStats(store);
    expect((await store.get('k1'))?.epoch).toBe(1);
    const afterRunning = fileStoreStats(store);
    expect([afterRunning.pinnedReads - before.pinnedReads, afterRunning.parsedHits - before.parsedHits]).toEqual([
      1, 1,
    ]);
    expect((await store.get('k2'))?.state).toBe('succeeded');
    const afterFinal = fileStoreStats(store);
    expect([
      afterFinal.pinnedReads - afterRunning.pinnedReads,
      afterFinal.parsedHits - afterRunning.parsedHits,
    ]).toEqual([0, 0]);
    await store.close();
  });

  it('a release of 200 operations at once reads every record under its claim from its pin', async () => {
    const store = fileStore({ dir: tempDir() });
    const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((key) => store.put(sampleRecord(key))));
    const before = fileStoreStats(store).pinnedReads;
    await Promise.all(keys.map((key) => store.update(key, (r) => (r === undefined ? r : { ...r, epoch: 1 }))));
    expect(fileStoreStats(store).pinnedReads - before).toBe(200);
    await store.close();
  });
});
