/**
 * Deleted records stay deleted across a power cut, even when another
 * writer's journal still holds an older line of them (removed.ts): `delete`
 * keeps the file aside in `removed/` until no journal segment older than the
 * deletion is left, and replay restores no version the deletion removed.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { RemovedRecords } from '../../src/store/file/removed.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { beforeBoot, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore, testMachine } from '../helpers/machine.js';

afterEach(() => removeTempDirs());

const journalOf = (dir: string) => join(dir, 'journal');
const segmentsIn = (dir: string) => fs.readdirSync(journalOf(dir)).filter((name) => name.endsWith('.log'));
const removedIn = (dir: string) => (fs.existsSync(join(dir, 'removed')) ? fs.readdirSync(join(dir, 'removed')) : []);

/** What a power cut leaves of the journal: every segment still there is from before the boot. */
function powerCut(dir: string): void {
  for (const name of segmentsIn(dir)) beforeBoot(join(journalOf(dir), name));
}

/** Record `key` as a store opened after a power cut that also lost its file's last rename finds it. */
async function afterPowerCutLosing(dir: string, key: string): Promise<OperationRecord | undefined> {
  fs.rmSync(join(dir, `${key}.json`));
  powerCut(dir);
  const after = fileStore({ dir });
  try {
    return await after.get(key);
  } finally {
    await after.close();
  }
}

describe('fileStore: deleted records after a power cut', () => {
  it("stay deleted though another writer's journal, not yet checkpointed, holds an older line of them", async () => {
    const dir = tempDir();
    const writer = fileStore({ dir });
    await writer.put(sampleRecord('k'));
    // Another handle (as another process would) deletes it; its journal is checkpointed and gone at close.
    const deleter = fileStore({ dir });
    await deleter.delete('k');
    await deleter.close();
    // The writer's segment, with the line of k, is all the journal holds.
    expect(segmentsIn(dir)).toHaveLength(1);
    expect(removedIn(dir)).toHaveLength(1);
    powerCut(dir);

    const after = fileStore({ dir });
    expect(await after.get('k')).toBeUndefined();
    expect(await after.list()).toEqual([]);
    expect(fs.existsSync(join(dir, 'k.json'))).toBe(false);
    expect(segmentsIn(dir)).toEqual([]);
    await after.close();
    await writer.close();
  });

  it('a record created again after its deletion comes back from the journal', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const writer = fileStore({ dir, runtime: rt });
    await writer.put(sampleRecord('k'));
    const deleter = fileStore({ dir, runtime: rt });
    await deleter.delete('k');
    await deleter.close();
    await rt.advance(5);
    await writer.put({ ...sampleRecord('k'), epoch: 7 });
    // Only the journal has the version written again.
    expect((await afterPowerCutLosing(dir, 'k'))?.epoch).toBe(7);
    await writer.close();
  });

  it('a removal that recovery replays stays kept, though recovery dies before the older segment is settled', async () => {
    const dir = tempDir();
    const writer = fileStore({ dir });
    await writer.put(sampleRecord('k'));
    const [writerSegment = ''] = segmentsIn(dir);
    const writerLines = fs.readFileSync(join(journalOf(dir), writerSegment));
    const written = fs.readFileSync(join(dir, 'k.json'));
    const deleter = fileStore({ dir });
    await deleter.delete('k');
    const deleterSegment = segmentsIn(dir).find((name) => name !== writerSegment) ?? '';
    const deleterLines = fs.readFileSync(join(journalOf(dir), deleterSegment));
    await deleter.close();
    await writer.close();
    // The power cut: the move into removed/ never reached the disk, and neither segment was checkpointed.
    fs.rmSync(join(dir, 'removed'), { recursive: true });
    fs.writeFileSync(join(dir, 'k.json'), written);
    const leave = (lines: Buffer, name: string): string => {
      const path = join(journalOf(dir), `${testMachine.hostId()}-4000000-${name}.0.log`);
      fs.writeFileSync(path, lines);
      beforeBoot(path);
      return path;
    };
    leave(deleterLines, 'dddddddddddd');
    leave(writerLines, 'eeeeeeeeeeee');

    const first = fileStore({ dir });
    expect(await first.get('k')).toBeUndefined();
    await first.close();
    // As if that recovery had died after settling the deleter's segment, before the writer's.
    leave(writerLines, 'eeeeeeeeeeee');
    const second = fileStore({ dir });
    expect(await second.get('k')).toBeUndefined();
    await second.close();
  });

  it('a record deleted and created again within the same millisecond (a discard, then a send) comes back', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k'));
    await store.delete('k');
    // No time passes: by the clock alone its revision would be below the removal's.
    await store.put({ ...sampleRecord('k'), epoch: 7 });
    expect((await afterPowerCutLosing(dir, 'k'))?.epoch).toBe(7);
    await store.close();
  });

  it('keeps a deletion aside while a journal segment started before it is left, and at least a minute', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k'));
    await store.delete('k');
    await store.close();
    // No segment is left, but the deletion is seconds old: a relaxed line queued before it may still land.
    expect(segmentsIn(dir)).toEqual([]);
    const [entry] = removedIn(dir);
    expect(entry).toMatch(/^\d+-\d+-k\.json$/);
    // A minute later (the entry's time is in its name).
    const [rev, atMs] = (entry ?? '').split('-');
    fs.renameSync(join(dir, 'removed', entry ?? ''), join(dir, 'removed', `${rev}-${Number(atMs) - 61_000}-k.json`));
    // The next checkpoint prunes it.
    const next = fileStore({ dir });
    await next.put(sampleRecord('other'));
    await next.close();
    expect(removedIn(dir)).toEqual([]);
  });
});

describe('RemovedRecords', () => {
  function setUp(): { dir: string; journalDir: string; removed: RemovedRecords } {
    const dir = tempDir();
    const journalDir = journalOf(dir);
    fs.mkdirSync(journalDir);
    return { dir, journalDir, removed: new RemovedRecords(dir, journalDir, { marginMs: 0, machine: testMachine }) };
  }

  it('moves a record aside under its removal revision, and reports the highest per record', async () => {
    const { dir, removed } = setUp();
    fs.writeFileSync(join(dir, 'a.json'), 'first');
    expect(await removed.moveAside('a.json', 5)).toBe(true);
    fs.writeFileSync(join(dir, 'a.json'), 'second');
    expect(await removed.moveAside('a.json', 9)).toBe(true);
    expect(await removed.moveAside('gone.json', 3)).toBe(false);
    expect(fs.existsSync(join(dir, 'a.json'))).toBe(false);
    expect(removed.revisions()).toEqual(new Map([['a.json', 9]]));
    const latest = fs.readdirSync(join(dir, 'removed')).find((name) => name.startsWith('9-'));
    expect(fs.readFileSync(join(dir, 'removed', latest ?? ''), 'utf8')).toBe('second');
    await removed.close();
  });

  it('prunes an entry only once every segment left was started after it (by the time in its name)', async () => {
    const { dir, journalDir, removed } = setUp();
    fs.writeFileSync(join(dir, 'a.json'), 'x');
    await removed.moveAside('a.json', 5);
    const [entry = ''] = fs.readdirSync(join(dir, 'removed'));
    const atMs = Number(entry.split('-')[1]);
    while (Date.now() <= atMs) {
      // at most a millisecond: the deletion is in the past, so only a segment can keep it
    }
    const prune = () => new RemovedRecords(dir, journalDir, { marginMs: 0, machine: testMachine }).prune();
    // Started before the deletion, or by a version that does not say when: may hold an older line of it.
    for (const older of [`ab12-1-0123-t${atMs - 1}.0.log`, 'ab12-1-0123.0.log']) {
      fs.writeFileSync(join(journalDir, older), '');
      await prune();
      expect(fs.readdirSync(join(dir, 'removed'))).toEqual([entry]);
      fs.rmSync(join(journalDir, older));
    }
    // Started after it: whatever it holds of the record is newer.
    fs.writeFileSync(join(journalDir, `ab12-1-0123-b0a1-t${atMs + 1}.0.log`), '');
    await prune();
    expect(fs.readdirSync(join(dir, 'removed'))).toEqual([]);
    await removed.close();
  });

  it('looks at the directory again only once the oldest entry it kept may go', async () => {
    const { dir, journalDir } = setUp();
    const removed = new RemovedRecords(dir, journalDir, { marginMs: 60_000, machine: testMachine });
    fs.writeFileSync(join(dir, 'a.json'), 'x');
    await removed.moveAside('a.json', 5);
    await removed.prune();
    const [entry = ''] = fs.readdirSync(join(dir, 'removed'));
    // Aged past the margin behind this handle's back: its next look is not due yet, so it keeps it.
    const [rev, atMs] = entry.split('-');
    fs.renameSync(join(dir, 'removed', entry), join(dir, 'removed', `${rev}-${Number(atMs) - 120_000}-a.json`));
    await removed.prune();
    expect(fs.readdirSync(join(dir, 'removed'))).toHaveLength(1);
    // Another handle (no look yet) prunes it.
    await new RemovedRecords(dir, journalDir, { marginMs: 60_000, machine: testMachine }).prune();
    expect(fs.readdirSync(join(dir, 'removed'))).toEqual([]);
    await removed.close();
  });

  it('a store that never deletes has no removed/ directory', async () => {
    const { dir, removed } = setUp();
    await removed.prune();
    await removed.sync();
    expect(removed.revisions().size).toBe(0);
    expect(fs.existsSync(join(dir, 'removed'))).toBe(false);
    await removed.close();
  });
});
