/**
 * The file store's one seam to the machine (src/store/file/machine.ts): the
 * system's readings, and what an injected machine changes. The only test
 * allowed to read the machine itself (test/architecture/machine.test.ts):
 * it checks the readings against the sources they come from, never against
 * a value this machine happens to have.
 */
import * as fs from 'node:fs';
import { hostname, uptime } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { fileStore, InvalidOptionsError } from '../../src/node.js';
import { hostIdOf, type Machine, machineOf, systemMachine } from '../../src/store/file/machine.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { deadPid, removeTempDirs, tempDir, writeClaim } from '../helpers/file-store.js';

afterEach(removeTempDirs);

const orEmpty = (read: () => string): string => {
  try {
    return read().trim();
  } catch {
    return '';
  }
};

describe('systemMachine', () => {
  it("is this process's host id from its host name, pid namespace and machine id", () => {
    const namespace = orEmpty(() => fs.readlinkSync('/proc/self/ns/pid'));
    const machine = orEmpty(() => fs.readFileSync('/etc/machine-id', 'utf8'));
    expect(systemMachine.hostId()).toBe(hostIdOf(hostname(), namespace, machine));
    expect(systemMachine.isCheckableHost(systemMachine.hostId())).toBe(true);
  });

  it("dates the boot from the system's uptime, and names it by the kernel's boot id where there is one", () => {
    const expected = Date.now() - uptime() * 1_000;
    expect(Math.abs(systemMachine.bootedAtMs() - expected)).toBeLessThan(5_000);
    const raw = orEmpty(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')).replace(/-/g, '');
    expect(systemMachine.bootId()).toBe(raw === '' ? undefined : raw.slice(0, 12));
  });

  it('tells a live pid from one that exited', () => {
    expect(systemMachine.pidAlive(process.pid)).toBe(true);
    expect(systemMachine.pidAlive(deadPid())).toBe(false);
    expect(systemMachine.pidAlive(0)).toBe(false);
    expect(systemMachine.pidAlive(-1)).toBe(false);
  });
});

describe('an injected machine', () => {
  it("checks hosts against its own host id, and keeps the system's other parts", () => {
    const machine = machineOf({ hostId: () => 'e57e57e5' });
    expect(machine.isCheckableHost('e57e57e5')).toBe(true);
    expect(machine.isCheckableHost(systemMachine.hostId())).toBe(false);
    expect(machine.pidAlive(process.pid)).toBe(true);
  });

  it('decides whose claim is dead: a dead pid of its host, or a file older than its boot', async () => {
    const dir = tempDir();
    const rt = createFakeRuntime();
    const host = 'e57e57e5';
    const open = (machine: Partial<Machine>) => fileStore({ dir, lockTimeoutMs: 150, runtime: rt, machine });
    const seed = open({});
    await seed.put(sampleRecord('k1'));
    await seed.close();
    const bump = (record: OperationRecord | undefined) => record && { ...record, epoch: record.epoch + 1 };
    // A holder alive by the machine's word: waited for, then given up on.
    writeClaim(dir, 'k1', { host, pid: 4242 });
    const alive = open({ hostId: () => host, pidAlive: () => true });
    await expect(rt.run(alive.update('k1', bump))).rejects.toMatchObject({ code: 'lock_timeout' });
    await alive.close();
    // The same claim, its holder dead by the machine's word: taken over at once.
    const dead = open({ hostId: () => host, pidAlive: (pid) => pid !== 4242 });
    expect((await dead.update('k1', bump))?.epoch).toBe(1);
    await dead.close();
    // Alive, but written before the machine booted: nobody can hold it.
    writeClaim(dir, 'k1', { host, pid: 4242 });
    const rebooted = open({ hostId: () => host, pidAlive: () => true, bootedAtMs: () => Date.now() + 60_000 });
    expect((await rebooted.update('k1', bump))?.epoch).toBe(2);
    await rebooted.close();
  });

  it('is refused at construction when a part is not a function, naming it', () => {
    expect(() => fileStore({ machine: { bootedAtMs: 5 as unknown as () => number } })).toThrow(InvalidOptionsError);
    expect(() => fileStore({ machine: { bootedAtMs: 5 as unknown as () => number } })).toThrow(/machine\.bootedAtMs/);
    expect(() => fileStore({ machine: null as unknown as object })).toThrow(/machine/);
  });
});
