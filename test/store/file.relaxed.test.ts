/**
 * Relaxed writes of the file store (`durability: 'relaxed'`): resolved
 * without waiting for a journal flush, flushed by the next durable write or
 * a timer, never at the cost of an earlier durable version, and a power cut
 * that loses one leaves the record as the last durable write left it.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { createClient, type FileStore } from '../../src/node.js';
import { type WriteStep, writeSteps } from '../../src/store/file/durable.js';
import { fileStoreStats } from '../../src/store/file/store.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { beforeBoot, openDescriptors, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore, testMachine } from '../helpers/machine.js';

afterEach(() => {
  writeSteps.hook = undefined;
  return removeTempDirs();
});

const RELAXED = { durability: 'relaxed' } as const;
const bump = (r: OperationRecord | undefined) => (r === undefined ? r : { ...r, epoch: r.epoch + 1 });
const journalOf = (dir: string) => join(dir, 'journal');
const segmentsIn = (dir: string) => fs.readdirSync(journalOf(dir)).filter((name) => name.endsWith('.log'));
/** The journal as it is on disk: only flushed lines are ever written to a segment. */
const journalText = (dir: string) =>
  segmentsIn(dir)
    .map((name) => fs.readFileSync(join(journalOf(dir), name), 'utf8'))
    .join('');
const epochInJournal = (dir: string, epoch: number) => journalText(dir).includes(`\\"epoch\\":${epoch},`);

/** What a power cut leaves of `dir`: `segment` (a copy of the journal taken earlier), from before the boot. */
function powerCut(dir: string, segment: string, damage: () => void): void {
  for (const name of segmentsIn(dir)) fs.rmSync(join(journalOf(dir), name));
  const path = join(journalOf(dir), `${testMachine.hostId()}-4000000-0123456789ab.0.log`);
  fs.writeFileSync(path, segment, { mode: 0o600 });
  damage();
  beforeBoot(path);
}

/** A store on a fresh directory, on a fake runtime, holding record k1 (written durably). */
async function storeWithK1(): Promise<{ dir: string; rt: ReturnType<typeof createFakeRuntime>; store: FileStore }> {
  const dir = tempDir();
  const rt = createFakeRuntime();
  const store = fileStore({ dir, runtime: rt });
  await store.put(sampleRecord('k1'));
  return { dir, rt, store };
}

describe('fileStore: relaxed writes', () => {
  it('resolve before their journal line is flushed; the next durable write (any key) flushes them with its own', async () => {
    const { dir, store } = await storeWithK1();
    const flushes = fileStoreStats(store).journalFlushes;
    expect((await store.update('k1', bump, RELAXED))?.epoch).toBe(1);
    expect((await store.update('k1', bump, RELAXED))?.epoch).toBe(2);
    // Resolved, visible, and not yet on disk in the journal: no flush ran.
    expect(fileStoreStats(store)).toMatchObject({ journalFlushes: flushes, relaxedLines: 2 });
    expect((await store.get('k1'))?.epoch).toBe(2);
    expect(epochInJournal(dir, 2)).toBe(false);
    // A durable write of another record: one flush covers it and both relaxed lines.
    await store.put(sampleRecord('k2'));
    expect(fileStoreStats(store).journalFlushes).toBe(flushes + 1);
    expect(epochInJournal(dir, 1) && epochInJournal(dir, 2)).toBe(true);
    await store.close();
  });

  it("are flushed on the runtime's timer when no durable write comes (100 ms of the runtime's time)", async () => {
    const { dir, rt, store } = await storeWithK1();
    await store.update('k1', bump, RELAXED);
    const flushes = fileStoreStats(store).journalFlushes;
    await rt.advance(99);
    expect(fileStoreStats(store).journalFlushes).toBe(flushes);
    await rt.advance(1);
    await vi.waitUntil(() => fileStoreStats(store).journalFlushes === flushes + 1, { timeout: 5_000 });
    expect(epochInJournal(dir, 1)).toBe(true);
    // Housekeeping, not a sleep anyone waits for.
    expect(rt.sleeps).toEqual([]);
    await store.close();
  });

  it('are made durable when this handle holds no flushed line of the record (its file may be the only copy)', async () => {
    const dir = tempDir();
    const writer = fileStore({ dir });
    await writer.put(sampleRecord('k1'));
    await writer.close();
    const store = fileStore({ dir });
    // Neither this handle nor a live segment holds a line of k1: a torn file after a power cut would lose it.
    expect((await store.update('k1', bump, RELAXED))?.epoch).toBe(1);
    expect(fileStoreStats(store)).toMatchObject({ relaxedLines: 0, journalFlushes: 1 });
    expect(epochInJournal(dir, 1)).toBe(true);
    // From then on its line anchors relaxed writes of k1; creating a record never risks an older version.
    await store.update('k1', bump, RELAXED);
    await store.put(sampleRecord('k2'), RELAXED);
    expect(fileStoreStats(store)).toMatchObject({ relaxedLines: 2, journalFlushes: 1 });
    await store.close();
  });

  it('are made durable when another handle wrote the record since this one flushed a line of it', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    // Another writer (another process, in effect: its own journal) writes k1 durably, then checkpoints and
    // removes its journal: the version it wrote is now durable in its file alone.
    const other = fileStore({ dir });
    expect((await other.update('k1', bump))?.epoch).toBe(1);
    await other.close();
    // This handle's line of k1 is of the version before: after a power cut it would bring that one back
    // over a torn file, losing the other writer's durable version. So this write is not relaxed.
    const relaxed = fileStoreStats(store).relaxedLines;
    expect((await store.update('k1', bump, RELAXED))?.epoch).toBe(2);
    expect(fileStoreStats(store).relaxedLines).toBe(relaxed);
    expect(epochInJournal(dir, 2)).toBe(true);
    // Its own line now anchors the next one.
    await store.update('k1', bump, RELAXED);
    expect(fileStoreStats(store).relaxedLines).toBe(relaxed + 1);
    await store.close();
  });

  it('a checkpoint flushes queued relaxed lines before it deletes the segment that anchored them', async () => {
    const { dir, rt, store } = await storeWithK1();
    const [first] = segmentsIn(dir);
    // Retired at 30 s (idle), checkpointed 35 s later: just before that, a relaxed write anchored by it.
    await rt.advance(30_000 + 34_999);
    expect(segmentsIn(dir)).toEqual([first]);
    await store.update('k1', bump, RELAXED);
    expect(fileStoreStats(store).relaxedLines).toBe(1);
    await rt.advance(1); // the checkpoint starts, before the relaxed timer (100 ms) would fire
    await vi.waitUntil(() => fileStoreStats(store).checkpoints === 1, { timeout: 5_000 });
    // The old segment is gone only with the relaxed line durable in a new one.
    expect(segmentsIn(dir)).not.toContain(first);
    expect(epochInJournal(dir, 1)).toBe(true);
    await store.close();
  });

  it('after a power cut that loses relaxed writes, the record is as the last durable write left it, never older', async () => {
    const { dir, store } = await storeWithK1();
    await store.update('k1', bump); // durable: epoch 1
    await store.update('k1', bump, RELAXED); // epoch 2, its line not flushed
    await store.put(sampleRecord('k2'), RELAXED); // a relaxed create, never flushed
    const durable = journalText(dir);
    expect(epochInJournal(dir, 2)).toBe(false);
    await store.close(); // (flushes; the cut below takes the journal back to what was durable)
    powerCut(dir, durable, () => {
      // The renamed files came back empty: their data never reached the disk.
      fs.truncateSync(join(dir, 'k1.json'), 0);
      fs.rmSync(join(dir, 'k2.json')); // the rename itself never did
    });
    const after = fileStore({ dir });
    const quarantined: string[] = [];
    after.onQuarantine((entry) => quarantined.push(entry.id));
    expect((await after.get('k1'))?.epoch).toBe(1);
    expect(await after.get('k2')).toBeUndefined();
    expect(quarantined).toEqual([]);
    await after.close();
  });

  it('a durable write covers the relaxed ones before it: after a power cut they come back from the journal', async () => {
    const { dir, store } = await storeWithK1();
    await store.update('k1', bump, RELAXED);
    await store.put(sampleRecord('k2'), RELAXED);
    await store.put(sampleRecord('k3')); // durable
    const durable = journalText(dir);
    await store.close();
    powerCut(dir, durable, () => {
      for (const key of ['k1', 'k2', 'k3']) fs.truncateSync(join(dir, `${key}.json`), 0);
    });
    const after = fileStore({ dir });
    expect((await after.list()).map((r) => [r.key, r.epoch])).toEqual([
      ['k1', 1],
      ['k2', 0],
      ['k3', 0],
    ]);
    expect(await after.quarantined()).toEqual([]);
    await after.close();
  });

  it.each<WriteStep>(['claim-opened', 'claim-written', 'temp-written', 'durable'])(
    'a failure at %s of a relaxed write releases the claim and its descriptor',
    async (failAt) => {
      const dir = tempDir();
      const rt = createFakeRuntime();
      const store = fileStore({ dir, runtime: rt });
      await store.put(sampleRecord('k1'));
      // Pin the record (its descriptor stays open by design) before counting descriptors.
      await store.update('k1', (r) => r, RELAXED);
      const descriptors = openDescriptors();
      let failures = 0;
      writeSteps.hook = (step) => {
        if (step === failAt && failures++ === 0) throw new Error(`injected failure at ${step}`);
      };
      await expect(rt.run(store.update('k1', bump, RELAXED))).rejects.toThrow(`injected failure at ${failAt}`);
      expect(failures).toBe(1);
      expect(fs.readdirSync(dir).sort()).toEqual(['journal', 'k1.json', 'quarantine']);
      expect(openDescriptors()).toBe(descriptors);
      // The next one goes through at once (a held claim would be waited for).
      expect((await rt.run(store.update('k1', bump, RELAXED)))?.epoch).toBeGreaterThanOrEqual(1);
      expect(rt.sleeps).toEqual([]);
      await store.close();
    },
  );
});

describe('fileStore: relaxed writes under the client', () => {
  it('a power cut that loses the relaxed "succeeded" leaves the attempt started: resume resends under the same key and gets the replay', async () => {
    const server = await startReferenceServer();
    try {
      const dir = tempDir();
      // The store's timers on a runtime nobody advances: only a durable write flushes the relaxed lines.
      const store = fileStore({ dir, runtime: createFakeRuntime() });
      const client = createClient({ store, baseUrl: server.url, owner: 'worker-1' });
      const sent = await client.send({ method: 'POST', url: '/payments', json: { amount: 4800 } });
      const key = sent.key;
      expect(server.ledger.effectCount(key)).toBe(1);
      // On disk in the journal: the write-ahead, which started attempt 1 (one flush); the success is not.
      const durable = journalText(dir);
      expect(durable).toContain('\\"state\\":\\"in_flight\\"');
      expect(durable).not.toContain('\\"state\\":\\"succeeded\\"');
      expect(fileStoreStats(store)).toMatchObject({ commits: 2, relaxedLines: 1, journalFlushes: 1 });
      await client.close();
      await store.close();
      powerCut(dir, durable, () => fs.truncateSync(store.pathOf(key), 0));

      const after = fileStore({ dir });
      const again = createClient({ store: after, baseUrl: server.url, owner: 'worker-1' });
      expect((await after.get(key))?.state).toBe('in_flight');
      const summary = await again.resume();
      expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
      expect((await after.get(key))?.state).toBe('succeeded');
      // The same key both times, one effect, and the second answer was the server's replay.
      expect(server.ledger.requests.map((r) => [r.key, r.outcome])).toEqual([
        [key, 'effect'],
        [key, 'replay'],
      ]);
      expect(server.ledger.effectCount(key)).toBe(1);
      await again.close();
      await after.close();
    } finally {
      await server.close();
    }
  });
});

describe('fileStore: records read back from pinned descriptors', () => {
  it('reads a record it wrote without opening it, and reads it again once anyone else changed it', async () => {
    const dir = tempDir();
    const store: FileStore = fileStore({ dir });
    const other = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    const hits = fileStoreStats(store).pinnedReads;
    expect((await store.get('k1'))?.epoch).toBe(0);
    expect(fileStoreStats(store).pinnedReads).toBe(hits + 1);
    // Another handle (another process) replaces the file: the pin no longer names it.
    await other.update('k1', bump);
    expect((await store.get('k1'))?.epoch).toBe(1);
    expect((await store.update('k1', bump))?.epoch).toBe(2);
    // Rewritten in place by hand (the store never does that): read again, and quarantined.
    fs.writeFileSync(store.pathOf('k1'), 'garbage');
    expect(await store.get('k1')).toBeUndefined();
    expect((await store.quarantined()).map((e) => e.id)).toEqual(['k1']);
    // Removed: the pin says so without a read.
    await store.put(sampleRecord('k2'));
    fs.rmSync(store.pathOf('k2'));
    expect(await store.get('k2')).toBeUndefined();
    await other.close();
    await store.close();
  });

  it('an update never builds on, nor returns, a pinned version another handle has replaced', async () => {
    const dir = tempDir();
    const store: FileStore = fileStore({ dir });
    const other = fileStore({ dir });
    await store.put(sampleRecord('k1')); // pinned by `store` at epoch 0
    await other.update('k1', bump); // epoch 1, in a new file
    // A change computed from the pinned text is redone on the file found under the claim.
    expect((await store.update('k1', bump))?.epoch).toBe(2);
    await other.update('k1', bump); // epoch 3
    // An updater that changes nothing answers from the file, not from the pin.
    expect((await store.update('k1', (r) => r))?.epoch).toBe(3);
    await other.update('k1', bump); // epoch 4
    // One that would change the pinned version but not the current one: no write, the current record.
    const commits = fileStoreStats(store).commits;
    const onlyFromZero = (r: OperationRecord | undefined) => (r?.epoch === 3 ? { ...r, epoch: 99 } : r);
    expect((await store.update('k1', onlyFromZero))?.epoch).toBe(4);
    expect(fileStoreStats(store).commits).toBe(commits);
    // Revisions keep growing past the other handle's (the pin's revision is not reused for a newer file).
    await store.update('k1', bump);
    const rev = (path: string) =>
      (JSON.parse(fs.readFileSync(path, 'utf8').split('\n')[1] ?? '') as { rev: number }).rev;
    const before = rev(store.pathOf('k1'));
    await other.update('k1', bump);
    await store.update('k1', bump);
    expect(rev(store.pathOf('k1'))).toBeGreaterThan(before + 1);
    expect((await other.get('k1'))?.epoch).toBe(7);
    await other.close();
    await store.close();
  });
});
