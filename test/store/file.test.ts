import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { uptime } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { fileStore } from '../../src/node.js';
import { HOST_ID } from '../../src/store/file/liveness.js';
import { fileNameFor, parseFileName } from '../../src/store/file/names.js';
import { fileStoreStats } from '../../src/store/file/store.js';
import { createFakeRuntime, sampleRecord } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { disposeWorkerBuild, spawnWorker } from '../helpers/file-worker.js';

afterEach(removeTempDirs);
afterAll(disposeWorkerBuild);

/** The pid of a process that has exited (so it is certainly not alive). */
function deadPid(): number {
  const result = spawnSync(process.execPath, ['-e', '']);
  if (result.pid === undefined) throw new Error('could not spawn');
  return result.pid;
}

function pendingPathOf(dir: string, key: string): string {
  return join(dir, `${fileNameFor(key)}.pending`);
}

/** A claim (pending) file as a holder leaves it: optional content, then its holder line. */
function writeClaim(dir: string, key: string, holder: { host: string; pid: number }, content = ''): string {
  const path = pendingPathOf(dir, key);
  fs.writeFileSync(path, `${content}${JSON.stringify({ ...holder, token: 'abcdef123456' })}\n`, { mode: 0o600 });
  return path;
}

/** Sets a file's mtime to before this machine booted (what a power cut leaves behind). */
function beforeBoot(path: string): void {
  const then = new Date(Date.now() - uptime() * 1000 - 3_600_000);
  fs.utimesSync(path, then, then);
}

const bump = (r: ReturnType<typeof sampleRecord> | undefined) =>
  r === undefined ? undefined : { ...r, epoch: r.epoch + 1 };

describe('fileStore: key → file name', () => {
  const keys = [
    'Ab9_-.:x',
    'ab9_-.:x',
    '.hidden',
    '..',
    'con',
    'CON',
    'nul.txt',
    'a:b:c',
    'k'.repeat(255),
    'K'.repeat(255),
    `${'k'.repeat(254)}K`,
    '5f0c2a5e-7d41-4c7a-9a3e-0b6c1f6f3b2d',
  ];

  it('is safe on every common file system and maps back to the key', () => {
    const names = keys.map(fileNameFor);
    for (const [i, name] of names.entries()) {
      expect(name).toMatch(/^[A-Za-z0-9_\-.%=]+\.json$/);
      expect(name.startsWith('.')).toBe(false);
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255 - 40); // room for lock/temp suffixes
      expect(name).not.toMatch(/^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i);
      const parsed = parseFileName(name);
      if (parsed.kind === 'record') expect(parsed.key).toBe(keys[i]);
      else expect(parsed.kind).toBe('hashed');
    }
    // Case-insensitive file systems must not merge two keys into one file.
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(keys.length);
    // Opaque keys stay readable.
    expect(fileNameFor('5f0c2a5e-7d41-4c7a-9a3e-0b6c1f6f3b2d')).toBe('5f0c2a5e-7d41-4c7a-9a3e-0b6c1f6f3b2d.json');
  });

  it('stores and lists every such key, long (hashed) ones included', async () => {
    const store = fileStore({ dir: tempDir() });
    for (const key of keys) await store.put(sampleRecord(key));
    expect((await store.list()).map((r) => r.key).sort()).toEqual([...keys].sort());
    for (const key of keys) expect((await store.get(key))?.key).toBe(key);
    expect(await store.quarantined()).toEqual([]);
  });

  it('ignores files that are not its own', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    fs.writeFileSync(join(dir, 'README.txt'), 'hello');
    fs.writeFileSync(join(dir, 'Upper.json'), '{}'); // not a name fileStore writes
    expect((await store.list()).map((r) => r.key)).toEqual(['k1']);
    expect(await store.quarantined()).toEqual([]);
  });
});

describe('fileStore: crash leftovers and claims', () => {
  it('never reads a claim (temp) file as a record, and removes those of dead writers', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    const half = JSON.stringify(sampleRecord('k2')).slice(0, 200);
    // Killed mid-update: half a record and the dead writer's line.
    const dead = writeClaim(dir, 'k2', { host: HOST_ID, pid: deadPid() }, `${half}\n`);
    // A power cut mid-write: torn bytes, no holder line, from before the boot.
    const torn = pendingPathOf(dir, 'k3');
    fs.writeFileSync(torn, half);
    beforeBoot(torn);
    // A live writer's complete next version: not ours to touch, and not a record yet.
    const live = writeClaim(dir, 'k4', { host: HOST_ID, pid: process.ppid }, `${JSON.stringify(sampleRecord('k4'))}\n`);
    // Killed between creating a claim and writing its holder line, a while ago.
    const empty = pendingPathOf(dir, 'k5');
    fs.writeFileSync(empty, '');
    const aWhileAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(empty, aWhileAgo, aWhileAgo);
    // A takeover that died half-way.
    const broken = `${pendingPathOf(dir, 'k1')}.broken-0123456789ab`;
    fs.writeFileSync(broken, 'x');
    beforeBoot(broken);

    expect((await store.list()).map((r) => r.key)).toEqual(['k1']);
    for (const key of ['k2', 'k3', 'k4', 'k5']) expect(await store.get(key)).toBeUndefined();
    expect(await store.quarantined()).toEqual([]);
    expect([dead, torn, live, empty, broken].map((path) => fs.existsSync(path))).toEqual([
      false,
      false,
      true,
      false,
      false,
    ]);
  });

  it('takes over at once a claim whose holder died, or that predates the boot', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k1'));
    await store.put(sampleRecord('k2'));
    const dead = writeClaim(dir, 'k1', { host: HOST_ID, pid: deadPid() });
    const old = writeClaim(dir, 'k2', { host: 'ffffffff', pid: 1 });
    beforeBoot(old);
    expect((await rt.run(store.update('k1', bump)))?.epoch).toBe(1);
    expect((await rt.run(store.update('k2', bump)))?.epoch).toBe(1);
    // At once: not a single pause to watch the holder.
    expect(rt.sleeps).toEqual([]);
    expect([fs.existsSync(dead), fs.existsSync(old)]).toEqual([false, false]);
  });

  it('waits for a live holder, and gives up after lockTimeoutMs', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, lockTimeoutMs: 150, runtime: rt });
    await store.put(sampleRecord('k1'));
    const claim = writeClaim(dir, 'k1', { host: HOST_ID, pid: process.ppid });
    const started = rt.monotonicNow();
    await expect(rt.run(store.update('k1', bump))).rejects.toMatchObject({ code: 'ELOCKTIMEOUT' });
    // It waited out lockTimeoutMs (of its own clock), looking again and again, then gave up.
    expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(150);
    expect(rt.sleeps.length).toBeGreaterThan(3);
    expect((await store.get('k1'))?.epoch).toBe(0);
    // The holder lets go while the next update is waiting for it: that update goes through.
    const patient = fileStore({ dir, lockTimeoutMs: 5_000, runtime: rt });
    const waits = rt.sleeps.length;
    const update = patient.update('k1', bump);
    await vi.waitUntil(() => rt.sleeps.length > waits);
    fs.rmSync(claim);
    expect((await rt.run(update))?.epoch).toBe(1);
  });

  it('an update that changes nothing takes no claim (it does not wait for a holder)', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, lockTimeoutMs: 150, runtime: rt });
    await store.put(sampleRecord('k1', { epoch: 3 }));
    writeClaim(dir, 'k1', { host: HOST_ID, pid: process.ppid });
    expect((await rt.run(store.update('k1', (current) => current)))?.epoch).toBe(3);
    expect(await rt.run(store.update('missing', () => undefined))).toBeUndefined();
    expect(rt.sleeps).toEqual([]);
    // A change still needs the claim, and so does an updater that throws on the unlocked read.
    await expect(rt.run(store.update('k1', bump))).rejects.toMatchObject({ code: 'ELOCKTIMEOUT' });
    await expect(
      rt.run(
        store.update('k1', () => {
          throw new Error('decided under the claim');
        }),
      ),
    ).rejects.toMatchObject({ code: 'ELOCKTIMEOUT' });
    expect(rt.sleeps.length).toBeGreaterThan(0);
  });

  it('takes over a claim it cannot check once it watched it unchanged for staleLockMs', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, staleLockMs: 300, lockTimeoutMs: 5_000, runtime: rt });
    await store.put(sampleRecord('k1'));
    await store.put(sampleRecord('k2'));
    writeClaim(dir, 'k1', { host: 'ffffffff', pid: 1 }); // another host
    writeClaim(dir, 'k2', { host: HOST_ID, pid: process.ppid }); // a live pid (perhaps recycled) that never refreshes
    for (const key of ['k1', 'k2']) {
      const started = rt.monotonicNow();
      expect((await rt.run(store.update(key, bump)))?.epoch).toBe(1);
      // Watched unchanged for staleLockMs, and not much longer.
      expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(300);
      expect(rt.monotonicNow() - started).toBeLessThan(300 + 2 * 16);
    }
  });

  it('never takes over a claim its holder keeps refreshing', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    let touches = 0;
    // The holder refreshes its claim while we wait: a new mtime before each of our looks.
    const refreshing = {
      ...rt,
      sleep(ms: number, signal?: AbortSignal) {
        const at = new Date(Date.now() + ++touches * 1_000);
        fs.utimesSync(claim, at, at);
        return rt.sleep(ms, signal);
      },
    };
    const store = fileStore({ dir, staleLockMs: 300, lockTimeoutMs: 1_200, runtime: refreshing });
    await store.put(sampleRecord('k1'));
    const claim = writeClaim(dir, 'k1', { host: 'ffffffff', pid: 1 });
    const started = rt.monotonicNow();
    await expect(rt.run(store.update('k1', bump))).rejects.toMatchObject({ code: 'ELOCKTIMEOUT' });
    // It watched for the whole lockTimeoutMs (four times staleLockMs) and never broke the claim.
    expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(1_200);
    expect(touches).toBeGreaterThan(10);
    expect(fs.existsSync(claim)).toBe(true);
  });

  it('takes over an empty claim (its creator died before writing a line) after a short grace', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k1'));
    fs.writeFileSync(pendingPathOf(dir, 'k1'), '');
    const started = rt.monotonicNow();
    expect((await rt.run(store.update('k1', bump)))?.epoch).toBe(1);
    // A grace of 1 s, not staleLockMs (10 s by default).
    expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(1_000);
    expect(rt.monotonicNow() - started).toBeLessThan(1_000 + 2 * 16);
  });

  it('names the last writer in each record file, after the record line', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    const [line, writer, rest] = fs.readFileSync(store.pathOf('k1'), 'utf8').split('\n');
    expect(JSON.parse(line ?? '')).toEqual(sampleRecord('k1'));
    expect(JSON.parse(writer ?? '')).toMatchObject({ host: HOST_ID, pid: process.pid });
    expect(rest).toBe('');
  });
});

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
    expect(seen).toEqual([undefined]);
    expect(result?.epoch).toBe(9);
    expect((await store.quarantined()).map((q) => q.id)).toEqual(['k1']);
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
