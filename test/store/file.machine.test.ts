import { afterEach, describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { fileStore, InvalidOptionsError } from '../../src/node.js';
import {
  BOOT_ID_PATH,
  bootIdOf,
  hostIdOf,
  MACHINE_ID_PATH,
  type Machine,
  type MachineSources,
  machineFromSources,
  machineOf,
} from '../../src/store/file/machine.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir, writeClaim } from '../helpers/file-store.js';

afterEach(removeTempDirs);

/** Sources of a made-up machine: no test reads the one it runs on. */
function sources(overrides: Partial<MachineSources> = {}): MachineSources {
  const files: Record<string, string> = {
    [MACHINE_ID_PATH]: 'm1\n',
    [BOOT_ID_PATH]: '0123abcd-4567-89ef-0123-456789abcdef\n',
  };
  return {
    hostname: () => 'box',
    uptimeS: () => 3_600,
    readText: (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      return text;
    },
    readLink: () => 'pid:[4026531836]',
    signal0: (pid) => {
      if (pid !== 77) throw Object.assign(new Error('ESRCH'), { code: 'ESRCH' });
    },
    pid: 42,
    now: () => 10_000_000,
    ...overrides,
  };
}

describe('machineFromSources (what the system machine reads)', () => {
  it('is the host id of its host name, pid namespace and machine id', () => {
    const machine = machineFromSources(sources());
    expect(machine.hostId()).toBe(hostIdOf('box', 'pid:[4026531836]', 'm1'));
    expect(machine.isCheckableHost(machine.hostId())).toBe(true);
    // The initial namespace: an earlier version's id (the host name's alone) is this host's too.
    expect(machine.isCheckableHost(hostIdOf('box', ''))).toBe(true);
    const container = machineFromSources(sources({ readLink: () => 'pid:[4026532201]' }));
    expect(container.isCheckableHost(hostIdOf('box', ''))).toBe(false);
  });

  it('dates the boot from the seconds since boot, a second early,, and names it by the boot id where there is one', () => {
    expect(machineFromSources(sources()).bootedAtMs()).toBe(10_000_000 - 3_600_000 - 1_000);
    expect(machineFromSources(sources()).bootId()).toBe('0123abcd4567');
    const none = machineFromSources(
      sources({
        readText: () => {
          throw new Error('ENOENT');
        },
      }),
    );
    expect(none.bootId()).toBeUndefined();
    expect(none.hostId()).toBe(hostIdOf('box', 'pid:[4026531836]', ''));
    expect(bootIdOf('not a boot id')).toBeNull();
  });

  it('tells a live pid (or one of another user: EPERM) from one that is gone', () => {
    const machine = machineFromSources(sources());
    expect(machine.pidAlive(42)).toBe(true);
    expect(machine.pidAlive(77)).toBe(true);
    expect(machine.pidAlive(78)).toBe(false);
    expect(machine.pidAlive(0)).toBe(false);
    expect(machine.pidAlive(-1)).toBe(false);
    const eperm = machineFromSources(
      sources({
        signal0: () => {
          throw Object.assign(new Error('EPERM'), { code: 'EPERM' });
        },
      }),
    );
    expect(eperm.pidAlive(78)).toBe(true);
  });
});

describe('an injected machine', () => {
  it("checks hosts against its own host id, and keeps the system's other parts", () => {
    const machine = machineOf({ hostId: () => 'e57e57e5' });
    expect(machine.isCheckableHost('e57e57e5')).toBe(true);
    expect(machine.isCheckableHost(hostIdOf('box', 'pid:[1]'))).toBe(false);
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
