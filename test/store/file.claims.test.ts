/**
 * Claims of the file store (claim.md): taking over those of dead, old and
 * unreadable holders, waiting for live ones, creating them atomically with
 * their holder line, sweeping crash debris, and releasing every claim on
 * every path.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { takeClaim, UNREADABLE_CLAIM_GRACE_MS } from '../../src/store/file/claim.js';
import { type WriteStep, writeSteps } from '../../src/store/file/durable.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import {
  afterBoot,
  agedBy,
  beforeBoot,
  claimPathOf,
  deadPid,
  openDescriptors,
  removeTempDirs,
  stampAt,
  tempDir,
  writeClaim,
} from '../helpers/file-store.js';
import { BOOTED_AT_MS, fileStore, testMachine } from '../helpers/machine.js';

afterEach(() => {
  writeSteps.hook = undefined;
  removeTempDirs();
});

const bump = (r: ReturnType<typeof sampleRecord> | undefined) =>
  r === undefined ? undefined : { ...r, epoch: r.epoch + 1 };

describe('claims on the runtime given', () => {
  it("a held claim is refreshed every third of staleLockMs of the runtime's time, and no more once released", async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const path = join(dir, 'k.json.pending');
    // Every 100 s: a real timer could never fire within this test.
    const claim = await takeClaim(path, { staleMs: 300_000, timeoutMs: 5_000, runtime: rt, machine: testMachine });
    // As old as a file of this boot can be: still that (untouched), or about now (touched).
    const old = new Date(BOOTED_AT_MS + 1_000);
    const halfway = (old.getTime() + testMachine.fileClockNow()) / 2;
    const touched = (): boolean => fs.statSync(path).mtimeMs > halfway;
    stampAt(path, old.getTime());
    await rt.advance(99_999);
    expect(touched()).toBe(false);
    await rt.advance(1);
    await vi.waitUntil(touched, { timeout: 5_000 });
    stampAt(path, old.getTime());
    await rt.advance(100_000);
    await vi.waitUntil(touched, { timeout: 5_000 });
    await claim.release();
    fs.writeFileSync(path, 'someone else');
    stampAt(path, old.getTime());
    await rt.advance(1_000_000);
    expect(touched()).toBe(false);
  });
});

describe('fileStore: crash leftovers and claims', () => {
  it('never reads a claim (temp) file as a record, and removes those of dead writers', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    const half = JSON.stringify(sampleRecord('k2')).slice(0, 200);
    // Killed mid-update: half a record and the dead writer's line.
    const dead = writeClaim(dir, 'k2', { host: testMachine.hostId(), pid: deadPid() }, `${half}\n`);
    // A power cut mid-write: torn bytes, no holder line, from before the boot.
    const torn = claimPathOf(dir, 'k3');
    fs.writeFileSync(torn, half);
    beforeBoot(torn);
    // A live writer's complete next version: not ours to touch, and not a record yet.
    const live = writeClaim(
      dir,
      'k4',
      { host: testMachine.hostId(), pid: process.ppid },
      `${JSON.stringify(sampleRecord('k4'))}\n`,
    );
    // Killed between creating a claim and writing its holder line, a while ago.
    const empty = claimPathOf(dir, 'k5');
    fs.writeFileSync(empty, '');
    afterBoot(empty);
    // A takeover that died half-way.
    const broken = `${claimPathOf(dir, 'k1')}.broken-0123456789ab`;
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
    const dead = writeClaim(dir, 'k1', { host: testMachine.hostId(), pid: deadPid() });
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
    const claim = writeClaim(dir, 'k1', { host: testMachine.hostId(), pid: process.ppid });
    const started = rt.monotonicNow();
    await expect(rt.run(store.update('k1', bump))).rejects.toMatchObject({
      name: 'LockTimeoutError',
      code: 'lock_timeout',
    });
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
    writeClaim(dir, 'k1', { host: testMachine.hostId(), pid: process.ppid });
    expect((await rt.run(store.update('k1', (current) => current)))?.epoch).toBe(3);
    expect(await rt.run(store.update('missing', () => undefined))).toBeUndefined();
    expect(rt.sleeps).toEqual([]);
    // A change still needs the claim, and so does an updater that throws on the unlocked read.
    await expect(rt.run(store.update('k1', bump))).rejects.toMatchObject({
      name: 'LockTimeoutError',
      code: 'lock_timeout',
    });
    await expect(
      rt.run(
        store.update('k1', () => {
          throw new Error('decided under the claim');
        }),
      ),
    ).rejects.toMatchObject({ name: 'LockTimeoutError', code: 'lock_timeout' });
    expect(rt.sleeps.length).toBeGreaterThan(0);
  });

  it('takes over a claim it cannot check once it watched it unchanged for staleLockMs', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, staleLockMs: 300, lockTimeoutMs: 5_000, runtime: rt });
    await store.put(sampleRecord('k1'));
    await store.put(sampleRecord('k2'));
    writeClaim(dir, 'k1', { host: 'ffffffff', pid: 1 }); // another host
    writeClaim(dir, 'k2', { host: testMachine.hostId(), pid: process.ppid }); // a live pid (perhaps recycled) that never refreshes
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
        const at = new Date(testMachine.fileClockNow() + ++touches * 1_000);
        stampAt(claim, at.getTime());
        return rt.sleep(ms, signal);
      },
    };
    const store = fileStore({ dir, staleLockMs: 300, lockTimeoutMs: 1_200, runtime: refreshing });
    await store.put(sampleRecord('k1'));
    const claim = writeClaim(dir, 'k1', { host: 'ffffffff', pid: 1 });
    const started = rt.monotonicNow();
    await expect(rt.run(store.update('k1', bump))).rejects.toMatchObject({
      name: 'LockTimeoutError',
      code: 'lock_timeout',
    });
    // It watched for the whole lockTimeoutMs (four times staleLockMs) and never broke the claim.
    expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(1_200);
    expect(touches).toBeGreaterThan(10);
    expect(fs.existsSync(claim)).toBe(true);
  });

  it('breaks a claim that names nobody, once older than the grace by its own mtime: at once, without a wait', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k1'));
    await store.put(sampleRecord('k2'));
    // Killed between creating a claim and writing its holder line (an older version), or torn.
    const empty = claimPathOf(dir, 'k1');
    fs.writeFileSync(empty, '');
    agedBy(empty, UNREADABLE_CLAIM_GRACE_MS + 500);
    const torn = claimPathOf(dir, 'k2');
    fs.writeFileSync(torn, '{"host":"ab');
    agedBy(torn, UNREADABLE_CLAIM_GRACE_MS + 500);
    expect((await rt.run(store.update('k1', bump)))?.epoch).toBe(1);
    expect((await rt.run(store.update('k2', bump)))?.epoch).toBe(1);
    // Judged by the file's own age: no process has to watch it first (a short-lived one never could).
    expect(rt.sleeps).toEqual([]);
    expect([fs.existsSync(empty), fs.existsSync(torn)]).toEqual([false, false]);
  });

  it('a fresh claim that names nobody is broken after watching it unchanged for the grace (a clock moved back)', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k1'));
    fs.writeFileSync(claimPathOf(dir, 'k1'), '');
    const started = rt.monotonicNow();
    expect((await rt.run(store.update('k1', bump)))?.epoch).toBe(1);
    // The grace (1 s), not staleLockMs (10 s by default).
    expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(UNREADABLE_CLAIM_GRACE_MS);
    expect(rt.monotonicNow() - started).toBeLessThan(UNREADABLE_CLAIM_GRACE_MS + 2 * 16);
  });

  it('takes a claim with two directory changes in all: one exclusive create (holder line written at once), one rename', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    const claim = claimPathOf(dir, 'k1');
    const seen: [string, string | undefined][] = [];
    writeSteps.hook = (step) => {
      if (step.startsWith('claim-'))
        seen.push([step, fs.existsSync(claim) ? fs.readFileSync(claim, 'utf8') : undefined]);
    };
    const before = fs.statSync(store.pathOf('k1')).ino;
    await store.update('k1', bump);
    const holder = `${JSON.stringify({ host: testMachine.hostId(), pid: process.pid })}`.slice(0, -1);
    // Empty only between the create and the write of the line (a kill there: see the crash-loop test).
    expect(seen.map(([step, text]) => [step, text === undefined ? 'absent' : text.startsWith(holder)])).toEqual([
      ['claim-opened', false],
      ['claim-written', true],
    ]);
    // The claim file itself became the record, and nothing else was created.
    expect(fs.statSync(store.pathOf('k1')).ino).not.toBe(before);
    expect(fs.readdirSync(dir).sort()).toEqual(['journal', 'k1.json', 'quarantine']);
    await store.close();
  });

  it('sweeps the temp files of claims being created by processes that are gone', async () => {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    const temp = (token: string) => `${claimPathOf(dir, 'k1')}.new-${token}`;
    // Killed before writing the holder line, a while ago; killed after it (a dead pid); just now (maybe alive).
    fs.writeFileSync(temp('000000000001'), '');
    agedBy(temp('000000000001'), UNREADABLE_CLAIM_GRACE_MS + 500);
    fs.writeFileSync(
      temp('000000000002'),
      `${JSON.stringify({ host: testMachine.hostId(), pid: deadPid(), token: 'x' })}\n`,
    );
    fs.writeFileSync(temp('000000000003'), '');
    expect((await store.list()).map((r) => r.key)).toEqual(['k1']);
    expect(['1', '2', '3'].map((n) => fs.existsSync(temp(`00000000000${n}`)))).toEqual([false, false, true]);
    // Removing one is always safe: a creator whose temp file vanished just tries again.
    expect((await store.update('k1', bump))?.epoch).toBe(1);
  });

  it('sweeps the crash debris of the journal’s recovery claim', async () => {
    const dir = tempDir();
    await fileStore({ dir }).put(sampleRecord('k1'));
    const journal = (name: string) => join(dir, 'journal', name);
    // A dead holder's recovery claim, a half-created one, a takeover that died half-way.
    fs.writeFileSync(
      journal('recovery.pending'),
      `${JSON.stringify({ host: testMachine.hostId(), pid: deadPid(), token: 'x' })}\n`,
    );
    fs.writeFileSync(journal('recovery.pending.new-000000000001'), '');
    fs.writeFileSync(journal('recovery.pending.broken-000000000002'), '{}');
    for (const name of ['recovery.pending.new-000000000001', 'recovery.pending.broken-000000000002']) {
      agedBy(journal(name), UNREADABLE_CLAIM_GRACE_MS + 500);
    }
    // A fresh handle settles the journal before its first call, and sweeps on the way.
    expect((await fileStore({ dir }).get('k1'))?.key).toBe('k1');
    expect(fs.readdirSync(join(dir, 'journal')).filter((name) => name.startsWith('recovery'))).toEqual([]);
  });

  it('names the last writer in each record file, after the record line', async () => {
    const store = fileStore({ dir: tempDir() });
    await store.put(sampleRecord('k1'));
    const [line, writer, rest] = fs.readFileSync(store.pathOf('k1'), 'utf8').split('\n');
    expect(JSON.parse(line ?? '')).toEqual(sampleRecord('k1'));
    expect(JSON.parse(writer ?? '')).toMatchObject({ host: testMachine.hostId(), pid: process.pid });
    expect(rest).toBe('');
  });
});

describe('fileStore: every acquisition is released on every path', () => {
  // Each step of taking a claim (claim.md) and of committing through it.
  const steps: WriteStep[] = ['claim-opened', 'claim-written', 'temp-written', 'durable'];

  it.each(steps)('a failure at %s releases the claim and its descriptor', async (failAt) => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const store = fileStore({ dir, runtime: rt });
    await store.put(sampleRecord('k1'));
    const descriptors = openDescriptors();
    let failures = 0;
    writeSteps.hook = (step) => {
      if (step === failAt && failures++ === 0) throw new Error(`injected failure at ${step}`);
    };
    await expect(rt.run(store.update('k1', bump))).rejects.toThrow(`injected failure at ${failAt}`);
    expect(failures).toBe(1);
    // Nothing of the claim is left on disk, and no descriptor stays open.
    expect(fs.readdirSync(dir).sort()).toEqual(['journal', 'k1.json', 'quarantine']);
    expect(openDescriptors()).toBe(descriptors);
    // The next update (same process, so a held claim would be waited for) goes through at once.
    expect((await rt.run(store.update('k1', bump)))?.epoch).toBe(1);
    expect(rt.sleeps).toEqual([]);
    await store.close();
  });
});
