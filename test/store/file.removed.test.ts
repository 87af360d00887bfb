/**
 * Deleted records stay deleted across a power cut, even when another
 * writer's journal still holds an older line of them (removed.ts): `delete`
 * keeps the file aside in `removed/` until no journal segment older than the
 * deletion is left, and replay restores no version the deletion removed.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileStore } from '../../src/node.js';
import { RemovedRecords } from '../../src/store/file/removed.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { beforeBoot, removeTempDirs, tempDir } from '../helpers/file-store.js';

afterEach(() => removeTempDirs());

const journalOf = (dir: string) => join(dir, 'journal');
const segmentsIn = (dir: string) => fs.readdirSync(journalOf(dir)).filter((name) => name.endsWith('.log'));
const removedIn = (dir: string) => (fs.existsSync(join(dir, 'removed')) ? fs.readdirSync(join(dir, 'removed')) : []);

/** What a power cut leaves of the journal: every segment still there is from before the boot. */
function powerCut(dir: string): void {
  for (const name of segmentsIn(dir)) beforeBoot(join(journalOf(dir), name));
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
    // The power cut also lost the new file's rename: only the journal has the version written again.
    fs.rmSync(join(dir, 'k.json'));
    powerCut(dir);

    const after = fileStore({ dir });
    expect((await after.get('k'))?.epoch).toBe(7);
    await after.close();
    await writer.close();
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
    return { dir, journalDir, removed: new RemovedRecords(dir, journalDir, { marginMs: 0 }) };
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

  it('prunes an entry only once every segment left was started after it', async () => {
    const { dir, journalDir, removed } = setUp();
    // A segment started before the deletion: it may hold an older line of the record.
    const older = join(journalDir, 'host-1-token.0.log');
    fs.writeFileSync(older, '');
    const bornMs = fs.statSync(older).birthtimeMs;
    fs.writeFileSync(join(dir, 'a.json'), 'x');
    await removed.moveAside('a.json', 5);
    // The deletion as made just after the segment started (file times have finer steps than an entry's ms),
    // and in the past: only the older segment keeps it.
    const [made] = fs.readdirSync(join(dir, 'removed'));
    const atMs = Math.ceil(bornMs) + 1;
    const entry = join(dir, 'removed', `5-${atMs}-a.json`);
    fs.renameSync(join(dir, 'removed', made ?? ''), entry);
    while (Date.now() <= atMs) {
      // at most a few milliseconds
    }
    await new RemovedRecords(dir, journalDir, { marginMs: 0 }).prune();
    expect(fs.existsSync(entry)).toBe(true);
    // Gone: nothing older than the deletion is left.
    fs.rmSync(older);
    await new RemovedRecords(dir, journalDir, { marginMs: 0 }).prune();
    expect(fs.existsSync(entry)).toBe(false);
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
