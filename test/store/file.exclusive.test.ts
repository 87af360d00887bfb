/**
 * The exclusive file store (`fileStore({ exclusive: true })`): the store
 * contract, write-behind (a write costs a journal line, its file comes a
 * moment later), the owner claim that keeps every other handle out, and a
 * killed owner's journal replayed by whoever comes next.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type FileStore, LockTimeoutError, OwnedStoreError } from '../../src/node.js';
import { writeSteps } from '../../src/store/file/durable.js';
import { fileStoreStats, writeBehindNow } from '../../src/store/file/options.js';
import { check, revOf } from '../../src/store/file/record-file.js';
import { sampleRecord, storeContract } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { disposeWorkerBuild, spawnWorker, waitForLine } from '../helpers/file-worker.js';
import { fileStore, testMachine } from '../helpers/machine.js';

afterEach(removeTempDirs);

/** Above Linux's largest pid: a process that cannot be alive. */
const DEAD_PID = 4_194_305;
afterAll(disposeWorkerBuild);

const bump = (store: FileStore, key: string) =>
  store.update(key, (current) =>
    current === undefined ? sampleRecord(key) : { ...current, epoch: current.epoch + 1 },
  );

/** The epoch in the record file of `key`, as on disk now (undefined: no file). */
function epochOnDisk(store: FileStore, key: string): number | undefined {
  const path = store.pathOf(key);
  if (!fs.existsSync(path)) return undefined;
  const checked = check(path.slice(path.lastIndexOf('/') + 1), fs.readFileSync(path, 'utf8'));
  if (!checked.ok) throw new Error(`record file of ${key} is not a valid record: ${checked.problems.join('; ')}`);
  return checked.record.epoch;
}

describe('fileStore({ exclusive: true }): the store contract', () => {
  for (const c of storeContract({
    create: () => fileStore({ dir: tempDir(), exclusive: true }),
    // The next owner: this one closes first (another handle would wait for it).
    reopen: async (store) => {
      await store.close?.();
      return fileStore({ dir: (store as FileStore).dir, exclusive: true });
    },
    // Overwrite the bytes on disk, behind the store's back, once the store has written its files.
    corrupt: async (store, key, text) => {
      await writeBehindNow(store as FileStore);
      fs.writeFileSync((store as FileStore).pathOf(key), text);
    },
  })) {
    // Cases that use both handles at once cannot run on a store only one handle may open.
    if (/concurrent increments all land|through another handle, and updates there/.test(c.name)) continue;
    it(c.name, c.run);
  }
});

describe('fileStore({ exclusive: true }): write-behind', () => {
  it('a write resolves on its journal line alone; its file follows, one write for an operation’s burst', async () => {
    const dir = tempDir();
    const store = fileStore({ dir, exclusive: true });
    try {
      await bump(store, 'k1');
      await bump(store, 'k1');
      await bump(store, 'k1');
      // Resolved, durable in the journal, readable: but no file yet (written behind, 50 ms later).
      expect((await store.get('k1'))?.epoch).toBe(2);
      expect(epochOnDisk(store, 'k1')).toBeUndefined();
      expect(fileStoreStats(store)).toMatchObject({ commits: 3, journalLines: 3, writtenBehind: 0 });
      expect((await store.list()).map((record) => record.epoch)).toEqual([2]);
      await writeBehindNow(store);
      expect(epochOnDisk(store, 'k1')).toBe(2);
      // Three writes, one file write: no claim file, no rename.
      expect(fileStoreStats(store).writtenBehind).toBe(1);
      expect(fs.readdirSync(dir).filter((name) => name.endsWith('.pending'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('close writes every file and checkpoints the journal: a shared handle then reads it all', async () => {
    const dir = tempDir();
    const owner = fileStore({ dir, exclusive: true });
    for (let i = 0; i < 20; i++) await bump(owner, `k${i % 5}`);
    await owner.delete('k4');
    await owner.close();
    expect(fs.readdirSync(join(dir, 'journal')).filter((name) => name.endsWith('.log'))).toEqual([]);
    const shared = fileStore({ dir });
    try {
      const epochs = (await shared.list()).map((record) => [record.key, record.epoch]).sort();
      expect(epochs).toEqual([
        ['k0', 3],
        ['k1', 3],
        ['k2', 3],
        ['k3', 3],
      ]);
    } finally {
      await shared.close();
    }
  });

  it('list applies filters and limits to the versions held in memory, not to the files behind them', async () => {
    const store = fileStore({ dir: tempDir(), exclusive: true });
    try {
      for (const key of ['a', 'b', 'c']) await store.put({ ...sampleRecord(key), nextAttemptAt: 1_000 });
      await writeBehindNow(store);
      // Now held in memory only: 'c' moves first in line, 'a' finishes.
      await store.update('c', (current) => current && { ...current, nextAttemptAt: 10 });
      await store.update('a', (current) => current && { ...current, state: 'succeeded' });
      expect((await store.list({ state: 'pending', limit: 1 })).map((record) => record.key)).toEqual(['c']);
      expect((await store.listSummaries?.({ state: 'pending' }))?.map((summary) => summary.key)).toEqual(['c', 'b']);
      expect((await store.list({ state: 'succeeded' })).map((record) => record.key)).toEqual(['a']);
    } finally {
      await store.close();
    }
  });
});

describe('fileStore({ exclusive: true }): races and failures', () => {
  it('a write-behind pass never drops a newer version set while it was writing the one it took', async () => {
    const store = fileStore({ dir: tempDir(), exclusive: true });
    try {
      await store.put(sampleRecord('x'));
      await bump(store, 'x');
      // A flush in flight, then a pass queued behind it, then an update of x whose line lands after the pass's
      // barrier: it sets its version while the pass writes the older one.
      const other = bump(store, 'y');
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const pass = writeBehindNow(store);
      const newer = bump(store, 'x');
      await Promise.all([other, newer, pass]);
      expect((await newer)?.epoch).toBe(2);
      expect((await store.get('x'))?.epoch).toBe(2);
      await writeBehindNow(store);
      expect(epochOnDisk(store, 'x')).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('a shared writer that finds a dead owner under its claim replays the owner first, outside its own queue', async () => {
    const dir = tempDir();
    const shared = fileStore({ dir });
    try {
      await shared.put(sampleRecord('k1'));
      const journal = join(dir, 'journal');
      // An owner that started after this call looked, wrote k1 at epoch 5 and was killed: its claim and its segment.
      writeSteps.hook = (step) => {
        if (step !== 'claim-written') return;
        writeSteps.hook = undefined;
        const holder = { host: testMachine.hostId(), pid: DEAD_PID, token: 'aaaaaaaaaaaa' };
        fs.writeFileSync(join(journal, 'owner.pending'), `${JSON.stringify(holder)}\n`);
        const rev = Date.now() + 1_000;
        const text = `${JSON.stringify({ ...sampleRecord('k1'), epoch: 5 })}\n${JSON.stringify({ ...holder, rev })}\n`;
        const boot = testMachine.bootId();
        const segment = `${testMachine.hostId()}-${DEAD_PID}-bbbbbbbbbbbb${boot === undefined ? '' : `-b${boot}`}-t${Date.now()}.0.behind.log`;
        fs.writeFileSync(join(journal, segment), `${JSON.stringify({ n: 'k1.json', r: rev, t: text })}\n`);
      };
      // Before the fix, the replay of k1 queued behind this very update: it never resolved.
      expect(await bump(shared, 'k1')).toMatchObject({ epoch: 6 });
      expect(
        fs.readdirSync(journal).filter((name) => name.endsWith('.behind.log') || name === 'owner.pending'),
      ).toEqual([]);
    } finally {
      writeSteps.hook = undefined;
      await shared.close();
    }
  });

  it('an owner whose files cannot be written at close lets go as a crashed owner: the next handle replays first', async () => {
    const dir = tempDir();
    const owner = fileStore({ dir, exclusive: true });
    await owner.put(sampleRecord('k1'));
    await writeBehindNow(owner);
    await bump(owner, 'k1');
    // Something that is not a file sits where k1's file goes and cannot be moved aside (no quarantine directory).
    fs.rmSync(owner.pathOf('k1'));
    fs.mkdirSync(owner.pathOf('k1'));
    fs.rmSync(join(dir, 'quarantine'), { recursive: true });
    fs.writeFileSync(join(dir, 'quarantine'), 'not a directory');
    await owner.close();
    fs.rmSync(join(dir, 'quarantine'));
    fs.mkdirSync(join(dir, 'quarantine'));
    const next = fileStore({ dir });
    try {
      expect((await next.get('k1'))?.epoch).toBe(1);
      expect((await bump(next, 'k1'))?.epoch).toBe(2);
    } finally {
      await next.close();
    }
  });
});

describe('fileStore({ exclusive: true }): an owner that lost its claim', () => {
  it('acknowledges no write once its claim is gone (looked at again after a second of its own time)', async () => {
    const runtime = createFakeRuntime();
    const dir = tempDir();
    const store = fileStore({ dir, exclusive: true, runtime });
    try {
      await bump(store, 'k1');
      // Taken over while it was frozen (another container's owner cannot be checked: after staleLockMs).
      const claim = join(dir, 'journal', 'owner.pending');
      fs.rmSync(claim);
      fs.writeFileSync(claim, `${JSON.stringify({ host: 'elsewhere', pid: 7, token: 'cccccccccccc' })}\n`);
      // Within the second it trusts its last look, a write still goes (the look costs a stat per write).
      await bump(store, 'k1');
      await runtime.advance(1_000);
      await expect(bump(store, 'k1')).rejects.toBeInstanceOf(OwnedStoreError);
    } finally {
      fs.rmSync(join(dir, 'journal', 'owner.pending'), { force: true });
      await store.close();
    }
  });

  it('serves, lists, deletes and settles nothing once taken over: the new owner’s journal is left alone', async () => {
    const runtime = createFakeRuntime();
    const dir = tempDir();
    const store = fileStore({ dir, exclusive: true, runtime });
    const journal = join(dir, 'journal');
    try {
      await bump(store, 'k1');
      await writeBehindNow(store);
      // Past the interval at which a list settles dead journals; this call's look at the claim is then trusted
      // for a second.
      await runtime.advance(31_000);
      expect((await store.get('k1'))?.epoch).toBe(0);
      // Taken over now by an owner in another container (a host that cannot be checked from here), which wrote
      // k1 again: its live segment.
      const holder = { host: 'e15e0000', pid: 7, token: 'cccccccccccc' };
      fs.rmSync(join(journal, 'owner.pending'));
      fs.writeFileSync(join(journal, 'owner.pending'), `${JSON.stringify(holder)}\n`);
      const rev = Date.now() + 60_000;
      const text = `${JSON.stringify({ ...sampleRecord('k1'), epoch: 9 })}\n${JSON.stringify({ ...holder, rev })}\n`;
      const segment = `e15e0000-7-cccccccccccc-t${Date.now()}.0.behind.log`;
      fs.writeFileSync(join(journal, segment), `${JSON.stringify({ n: 'k1.json', r: rev, t: text })}\n`);
      // Within the trusted second, a list still runs and settles: the new owner's segment is not a dead
      // writer's to this handle any more (it asks whether it holds the claim, not whether it was opened as
      // an owner).
      await store.list();
      expect(fs.readdirSync(journal)).toContain(segment);
      expect(epochOnDisk(store, 'k1')).toBe(0);
      // Past that second, it serves nothing.
      await runtime.advance(1_000);
      await expect(store.list()).rejects.toBeInstanceOf(OwnedStoreError);
      await expect(store.get('k1')).rejects.toBeInstanceOf(OwnedStoreError);
      await expect(store.delete('k1')).rejects.toBeInstanceOf(OwnedStoreError);
      expect(fs.readdirSync(journal)).toContain(segment);
    } finally {
      fs.rmSync(journal, { recursive: true, force: true });
      fs.mkdirSync(journal);
      await store.close();
    }
  });

  it('a write whose claim was taken while its line was flushed is refused as one that may still take effect', async () => {
    // Clocks this test moves by hand, synchronously, inside the write.
    let shiftMs = 0;
    const runtime = { monotonicNow: () => performance.now() + shiftMs, now: () => Date.now() + shiftMs };
    const dir = tempDir();
    const store = fileStore({ dir, exclusive: true, runtime });
    const claim = join(dir, 'journal', 'owner.pending');
    try {
      await bump(store, 'k1');
      writeSteps.hook = (step) => {
        if (step !== 'durable') return;
        writeSteps.hook = undefined;
        // Frozen while its line was flushed, longer than it trusts a look, and taken over meanwhile.
        fs.rmSync(claim);
        fs.writeFileSync(claim, `${JSON.stringify({ host: 'e15e0000', pid: 7, token: 'cccccccccccc' })}\n`);
        shiftMs += 2_000;
      };
      const refused = await bump(store, 'k1').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OwnedStoreError);
      expect(refused).toMatchObject({ code: 'store_owned', mayHaveBeenWritten: true });
      expect((refused as Error).message).toMatch(/may still take effect/);
    } finally {
      writeSteps.hook = undefined;
      fs.rmSync(claim, { force: true });
      await store.close();
    }
  });
});

describe('fileStore({ exclusive: true }): one owner at a time', () => {
  it('in one process: a shared handle is refused at once, a second owner waits, both get in once it closes', async () => {
    const dir = tempDir();
    const owner = fileStore({ dir, exclusive: true });
    await bump(owner, 'k1');
    const shared = fileStore({ dir });
    const second = fileStore({ dir, exclusive: true, lockTimeoutMs: 100 });
    try {
      const refused = await shared.get('k1').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OwnedStoreError);
      expect(refused).toMatchObject({ code: 'store_owned', dir: owner.dir });
      await expect(shared.put(sampleRecord('k2'))).rejects.toBeInstanceOf(OwnedStoreError);
      await expect(second.get('k1')).rejects.toBeInstanceOf(LockTimeoutError);
      await owner.close();
      expect((await shared.get('k1'))?.epoch).toBe(0);
      expect(await shared.get('k2')).toBeUndefined();
      await shared.close();
      expect((await second.get('k1'))?.epoch).toBe(0);
    } finally {
      await owner.close();
      await shared.close();
      await second.close();
    }
  });

  it('a shared writer holding a record when an owner starts finishes first; the owner sees its write', async () => {
    const dir = tempDir();
    const shared = fileStore({ dir });
    await shared.put(sampleRecord('k1'));
    let ownerOpened: Promise<unknown> | undefined;
    const owner = fileStore({ dir, exclusive: true });
    try {
      // The owner starts while the shared update holds the record's claim, past its look for an owner (its new
      // version just written into the claim). Starting before that look, the owner would make the update fail
      // with OwnedStoreError instead: one of the two always sees the other.
      writeSteps.hook = (step) => {
        if (step === 'temp-written') ownerOpened ??= owner.get('k1');
      };
      await shared.update('k1', (current) => current && { ...current, epoch: 7 });
      writeSteps.hook = undefined;
      expect(ownerOpened).toBeDefined();
      expect(((await ownerOpened) as { epoch: number } | undefined)?.epoch).toBe(7);
      await expect(shared.get('k1')).rejects.toBeInstanceOf(OwnedStoreError);
    } finally {
      writeSteps.hook = undefined;
      await owner.close();
      await shared.close();
    }
  });

  it('across processes: a live owner keeps the others out; killed, its journal is replayed by the next one in', async () => {
    const dir = tempDir();
    const child = await spawnWorker({ mode: 'owner', dir, key: 'k1', count: 3 });
    try {
      expect(await waitForLine(child, 'holding')).toBe(true);
      const shared = fileStore({ dir });
      try {
        await expect(shared.get('k1')).rejects.toMatchObject({ code: 'store_owned' });
        const second = fileStore({ dir, exclusive: true, lockTimeoutMs: 100 });
        await expect(second.get('k1')).rejects.toBeInstanceOf(LockTimeoutError);
        await second.close();
        child.kill();
        expect((await child.exited).killed).toBe(true);
        // Taken over at once (a dead pid), its journal replayed first.
        expect((await shared.get('k1'))?.epoch).toBe(2);
        expect(await shared.update('k1', (current) => current && { ...current, epoch: 9 })).toMatchObject({
          epoch: 9,
        });
      } finally {
        await shared.close();
      }
    } finally {
      child.kill();
    }
  });

  it('an owner killed before its files were written loses nothing it acknowledged: the replay restores it', async () => {
    for (const exclusive of [true, false]) {
      const dir = tempDir();
      // Killed as its fifth write becomes durable: four acknowledged, none of them written behind yet
      // (the first pass comes 50 ms after the first write).
      const child = await spawnWorker({
        mode: 'owner',
        dir,
        key: 'k1',
        count: 5,
        kill: { at: 'write', step: 'durable', n: 5 },
      });
      const exit = await child.exited;
      expect(exit.killed).toBe(true);
      const acknowledged = exit.lines.filter((line) => line.startsWith('upd ')).map((line) => Number(line.slice(4)));
      expect(acknowledged).toEqual([0, 1, 2, 3]);
      const next = fileStore({ dir, exclusive });
      try {
        // The fifth write's line was durable too: replay may keep it (it never resolved, so either is right).
        expect((await next.get('k1'))?.epoch).toBeGreaterThanOrEqual(3);
        const text = fs.readFileSync(next.pathOf('k1'), 'utf8');
        expect(revOf(text)).toBeGreaterThan(0);
      } finally {
        await next.close();
      }
    }
  });
});
