import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { type WriteStep, writeSteps } from '../../src/store/file/durable.js';
import { checkableFrom, hostIdOf } from '../../src/store/file/machine.js';
import { fileStoreStats } from '../../src/store/file/store.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { afterBoot, beforeBoot, deadPid, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore, machineWith, testMachine } from '../helpers/machine.js';

const hostId = (): string => testMachine.hostId();

afterEach(() => {
  writeSteps.hook = undefined;
  return removeTempDirs();
});

const journalOf = (dir: string) => join(dir, 'journal');
const segmentsIn = (dir: string) => fs.readdirSync(journalOf(dir)).filter((name) => name.endsWith('.log'));

/**
 * Runs `writes` on a store, keeps a copy of its journal as a writer that
 * died (pid `pid`) would have left it, then closes the store.
 */
async function journalLeftBy(
  dir: string,
  pid: number,
  writes: (store: ReturnType<typeof fileStore>) => Promise<void>,
  afterwards?: (store: ReturnType<typeof fileStore>) => Promise<void>,
): Promise<string> {
  const store = fileStore({ dir });
  await writes(store);
  const [segment] = segmentsIn(dir);
  if (segment === undefined) throw new Error('no journal segment');
  // Kept aside under a name no store settles while the test still writes.
  const aside = join(dir, 'segment.copy');
  fs.copyFileSync(join(journalOf(dir), segment), aside);
  await afterwards?.(store);
  await store.close();
  const copy = join(journalOf(dir), `${hostId()}-${pid}-0123456789ab.0.log`);
  fs.renameSync(aside, copy);
  return copy;
}

describe('fileStore journal', () => {
  it("an idle handle checkpoints on its runtime's timers: 30 s, then 35 s of the runtime's time, no wall-clock wait", async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k1'));
    expect(segmentsIn(dir)).toHaveLength(1);
    // Housekeeping never counts as a sleep the engine waits for.
    expect(rt.pendingTimers).toBe(0);
    await rt.advance(30_000 + 34_999);
    expect(fileStoreStats(store).checkpoints).toBe(0);
    expect(segmentsIn(dir)).toHaveLength(1);
    await rt.advance(1);
    await vi.waitUntil(() => fileStoreStats(store).checkpoints === 1, { timeout: 5_000 });
    expect(segmentsIn(dir)).toEqual([]);
    // The next write opens a new segment, on the same timers.
    await store.put(sampleRecord('k2'));
    expect(segmentsIn(dir)).toHaveLength(1);
    await store.close();
    expect(fileStoreStats(store).checkpoints).toBe(2);
  });

  it('makes a write durable in the journal before the record is renamed into place', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    const seen: { step: WriteStep; inJournal: boolean; onDisk: number | undefined }[] = [];
    writeSteps.hook = (step) => {
      const journal = segmentsIn(dir)
        .map((name) => fs.readFileSync(join(journalOf(dir), name), 'utf8'))
        .join('');
      const onDisk = JSON.parse(fs.readFileSync(store.pathOf('k1'), 'utf8').split('\n')[0] ?? '') as OperationRecord;
      seen.push({ step, inJournal: journal.includes('\\"epoch\\":7'), onDisk: onDisk.epoch });
    };
    await store.update('k1', (current) => (current ? { ...current, epoch: 7 } : current));
    expect(seen).toEqual([
      // The claim is taken (created, its holder line written) before anything is written.
      { step: 'claim-opened', inJournal: false, onDisk: 0 },
      { step: 'claim-written', inJournal: false, onDisk: 0 },
      { step: 'temp-written', inJournal: false, onDisk: 0 },
      { step: 'durable', inJournal: true, onDisk: 0 },
      { step: 'renamed', inJournal: true, onDisk: 7 },
    ]);
    await store.close();
  });

  it('group-commits: 64 concurrent writes cost a handful of flushes, and close removes the segment', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await Promise.all(Array.from({ length: 64 }, (_, i) => store.put(sampleRecord(`k${i}`))));
    const stats = fileStoreStats(store);
    expect(stats.journalLines).toBe(64);
    expect(stats.journalFlushes).toBeLessThan(16);
    expect(segmentsIn(dir)).toHaveLength(1);
    await store.close();
    expect(fs.readdirSync(journalOf(dir))).toEqual([]);
    expect(fileStoreStats(store).checkpoints).toBe(1);
    expect(await fileStore({ dir }).list()).toHaveLength(64);
  });

  it('after a power cut, replays the latest version of every record that did not make it to disk', async () => {
    const dir = tempDir();
    const earlier = new Map<string, string>();
    const segment = await journalLeftBy(
      dir,
      4_000_000,
      async (store) => {
        await store.put(sampleRecord('torn'));
        await store.update('torn', (r) => (r ? { ...r, epoch: 2 } : r));
        await store.put(sampleRecord('lost'));
        await store.put(sampleRecord('stale'));
        earlier.set('stale', fs.readFileSync(store.pathOf('stale'), 'utf8'));
        await store.update('stale', (r) => (r ? { ...r, epoch: 5 } : r));
        await store.put(sampleRecord('removed'));
        earlier.set('removed', fs.readFileSync(store.pathOf('removed'), 'utf8'));
        await store.delete('removed');
        await store.put(sampleRecord('newer'));
      },
      // Written after that journal (before the cut): `newer` is newer on disk than in it.
      (store) => store.update('newer', (r) => (r ? { ...r, epoch: 9 } : r)).then(() => undefined),
    );
    // The damage a power cut can do to files written without fsync:
    fs.truncateSync(join(dir, 'torn.json'), 10); // renamed, data not yet written back
    fs.rmSync(join(dir, 'lost.json')); // the rename itself never reached the disk
    fs.writeFileSync(join(dir, 'stale.json'), earlier.get('stale') ?? ''); // an older version came back
    fs.writeFileSync(join(dir, 'removed.json'), earlier.get('removed') ?? ''); // so did a removed one
    fs.appendFileSync(segment, '{"n":"torn.json","r":99999999999999,"t":"{\\"v'); // a torn last line
    beforeBoot(segment);

    const store = fileStore({ dir });
    const quarantined: string[] = [];
    store.onQuarantine((entry) => quarantined.push(entry.id));
    expect((await store.get('torn'))?.epoch).toBe(2);
    expect((await store.get('lost'))?.key).toBe('lost');
    expect((await store.get('stale'))?.epoch).toBe(5);
    expect(await store.get('removed')).toBeUndefined();
    expect((await store.get('newer'))?.epoch).toBe(9);
    expect(quarantined).toEqual([]);
    expect(segmentsIn(dir)).toEqual([]);
    await store.close();
  });

  it('replays a segment this host wrote during another boot, though its time says this boot', async () => {
    const dir = tempDir();
    const left = await journalLeftBy(dir, deadPid(), async (store) => {
      await store.put(sampleRecord('lost'));
    });
    // As a machine that restarted within a second (or with its clock behind) leaves it: a recent time.
    const otherBoot = left.replace(/\.0\.log$/, '-b000000000000.0.log');
    fs.renameSync(left, otherBoot);
    fs.rmSync(join(dir, 'lost.json')); // the rename never reached the disk
    const store = fileStore({ dir, machine: { bootId: () => 'aaaaaaaaaaaa' } });
    expect((await store.get('lost'))?.key).toBe('lost');
    expect(segmentsIn(dir)).toEqual([]);
    await store.close();
  });

  it('leaves alone a segment of this boot whose writer it cannot tell dead (a boot id and a live pid)', async () => {
    const dir = tempDir();
    const left = await journalLeftBy(dir, process.ppid, async (store) => {
      await store.put(sampleRecord('kept'));
    });
    const thisBoot = left.replace(/\.0\.log$/, '-baaaaaaaaaaaa.0.log');
    fs.renameSync(left, thisBoot);
    const store = fileStore({ dir, machine: { bootId: () => 'aaaaaaaaaaaa' } });
    expect((await store.list()).map((r) => r.key)).toEqual(['kept']);
    expect(fs.existsSync(thisBoot)).toBe(true);
    await store.close();
  });

  it("leaves alone the journal of a writer whose pid it cannot check (another container's pid 1), until a reboot", async () => {
    const dir = tempDir();
    const left = await journalLeftBy(dir, process.pid, async (store) => {
      await store.put(sampleRecord('theirs'));
    });
    // The same host name, another pid namespace: its pid means nothing here, even when it equals ours.
    const twin = join(journalOf(dir), `${hostIdOf('twin', 'pid:[1]')}-${process.pid}-0123456789ab.0.log`);
    fs.renameSync(left, twin);
    // Idle since the boot: a clock that jumped says as much of a live writer's segment, so idleness proves nothing.
    afterBoot(twin);
    const store = fileStore({ dir });
    expect((await store.list()).map((r) => r.key)).toEqual(['theirs']);
    expect(fs.existsSync(twin)).toBe(true);
    await store.close();
    // After a reboot, it is replayed like any other.
    fs.rmSync(join(dir, 'theirs.json'));
    beforeBoot(twin);
    const later = fileStore({ dir });
    expect((await later.get('theirs'))?.key).toBe('theirs');
    expect(fs.existsSync(twin)).toBe(false);
    await later.close();
  });

  it('settles the journal an earlier version left on this host (host name only in its id) when it can check it', async () => {
    const legacy = hostIdOf('box', '');
    // From the initial pid namespace, the host name's id is this host's too; from a container, it is not.
    for (const initialNamespace of [true, false]) {
      const dir = tempDir();
      const segment = await journalLeftBy(dir, deadPid(), async (store) => {
        await store.put(sampleRecord('kept'));
      });
      const named = join(journalOf(dir), `${legacy}-${deadPid()}-0123456789ab.0.log`);
      fs.renameSync(segment, named);
      const machine = machineWith({
        isCheckableHost: (host) => checkableFrom(host, testMachine.hostId(), legacy, initialNamespace),
      });
      const store = fileStore({ dir, machine });
      expect((await store.list()).map((r) => r.key)).toEqual(['kept']);
      expect(fs.existsSync(named)).toBe(!initialNamespace);
      await store.close();
    }
  });

  it('settles the journal of a writer killed on this boot without replaying it', async () => {
    const dir = tempDir();
    const segment = await journalLeftBy(dir, deadPid(), async (store) => {
      await store.put(sampleRecord('kept'));
      await store.put(sampleRecord('swept'));
    });
    // Removed later by someone else: the dead writer's older line must not bring it back.
    fs.rmSync(join(dir, 'swept.json'));
    expect(fs.existsSync(segment)).toBe(true);

    const store = fileStore({ dir });
    expect(await store.get('swept')).toBeUndefined();
    expect((await store.list()).map((r) => r.key)).toEqual(['kept']);
    expect(fs.existsSync(segment)).toBe(false);
    await store.close();
  });

  it('a recovery that fails (another process holds it too long) is tried again by the next call', async () => {
    const dir = tempDir();
    await fileStore({ dir }).put(sampleRecord('k1'));
    const segment = join(journalOf(dir), `${hostId()}-${deadPid()}-0123456789ab.0.log`);
    fs.writeFileSync(segment, '', { mode: 0o600 });
    const claim = join(journalOf(dir), 'recovery.pending');
    fs.writeFileSync(claim, `${JSON.stringify({ host: hostId(), pid: process.ppid, token: 'abcdef123456' })}\n`);
    const store = fileStore({ dir, lockTimeoutMs: 100 });
    await expect(store.get('k1')).rejects.toMatchObject({ name: 'LockTimeoutError', code: 'lock_timeout' });
    fs.rmSync(claim);
    expect((await store.get('k1'))?.key).toBe('k1');
    expect(fs.existsSync(segment)).toBe(false);
    await store.close();
  });

  it('leaves the journal of a live writer alone', async () => {
    const dir = tempDir();
    const writer = fileStore({ dir });
    await writer.put(sampleRecord('k1'));
    const [own] = segmentsIn(dir);
    const other = fileStore({ dir });
    expect((await other.list()).map((r) => r.key)).toEqual(['k1']);
    expect(segmentsIn(dir)).toContain(own);
    await other.close();
    await writer.close();
  });
});

describe('hostIdOf', () => {
  it('tells pid namespaces and machines of one host name apart, and is the host name alone without them', () => {
    expect(hostIdOf('box', 'pid:[4026531836]')).not.toBe(hostIdOf('box', 'pid:[4026532201]'));
    // Two machines of one host name, both in the initial namespace (named alike on every kernel).
    expect(hostIdOf('box', 'pid:[4026531836]', 'a1')).not.toBe(hostIdOf('box', 'pid:[4026531836]', 'b2'));
    expect(hostIdOf('box', 'pid:[4026531836]')).toMatch(/^[0-9a-f]{8}$/);
    expect(hostIdOf('box', '')).toBe(createHash('sha256').update('box').digest('hex').slice(0, 8));
  });

  it("takes an earlier version's id (the host name's alone) for this host only in the initial pid namespace", () => {
    const legacy = hostIdOf('box', '');
    const id = hostIdOf('box', 'pid:[4026531836]', 'm1');
    expect(checkableFrom(id, id, legacy, false)).toBe(true);
    expect(checkableFrom(legacy, id, legacy, true)).toBe(true);
    // In a container, an earlier version's writer of the same host name may be another container's.
    expect(checkableFrom(legacy, id, legacy, false)).toBe(false);
    expect(checkableFrom(hostIdOf('other', ''), id, legacy, true)).toBe(false);
  });
});
