/**
 * The machine the suite runs on, as the file stores under test see it.
 *
 * A file store judges files by the machine's boot time (a claim or journal
 * segment older than the boot belongs to no living process), so a suite that
 * read the real one would pass or fail by when its machine booted: a test
 * that ages a file by six hours found it "before the boot" on every CI
 * runner up less than six hours. So every file store a test opens takes the
 * boot time from here (`fileStore` below), and every test that ages a file
 * computes the age from `BOOTED_AT_MS` (file-store.ts: `agedBy`,
 * `afterBoot`, `beforeBoot`).
 *
 * The boot time is injected: `ONCELY_TEST_UPTIME_MS` says how long ago the
 * machine booted (default 1 hour; `.ci/run` also runs the file store's tests
 * as booted 60 s and 40 days ago). The first test process to load this
 * module turns it into `ONCELY_TEST_BOOTED_AT_MS`, which the worker
 * processes it spawns inherit, so a child and its test agree on the boot.
 * test/architecture/machine.test.ts keeps tests from reading the machine
 * any other way.
 */
import { fileStore as systemFileStore } from '../../src/node.js';
import type { FileStore, FileStoreOptions } from '../../src/store/file/index.js';
import { type Machine, machineOf, systemMachine } from '../../src/store/file/machine.js';

const UPTIME_ENV = 'ONCELY_TEST_UPTIME_MS';
const BOOTED_AT_ENV = 'ONCELY_TEST_BOOTED_AT_MS';
const DEFAULT_UPTIME_MS = 3_600_000;

function msFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of milliseconds, got '${raw}'`);
  return value;
}

function injectedBootedAtMs(): number {
  const inherited = msFromEnv(BOOTED_AT_ENV);
  if (inherited !== undefined) return inherited;
  const bootedAtMs = systemMachine.fileClockNow() - (msFromEnv(UPTIME_ENV) ?? DEFAULT_UPTIME_MS);
  process.env[BOOTED_AT_ENV] = String(bootedAtMs);
  return bootedAtMs;
}

/** When the machine booted, as every file store of the suite sees it (ms on the file clock). */
export const BOOTED_AT_MS = injectedBootedAtMs();

/** How long ago the machine booted, as the suite sees it. */
export function uptimeMs(): number {
  return systemMachine.fileClockNow() - BOOTED_AT_MS;
}

/**
 * The suite's machine: the system's host id, pids and file clock (real
 * processes share them with the tests that spawn them), with the injected
 * boot time.
 */
export const testMachine: Machine = machineOf({ bootedAtMs: () => BOOTED_AT_MS });

/** `testMachine` with some parts replaced (a boot id, a pid's liveness). */
export function machineWith(parts: Partial<Machine>): Machine {
  return machineOf({ bootedAtMs: () => BOOTED_AT_MS, ...parts });
}

/** `fileStore` of `oncely/node` on the suite's machine (unless `options.machine` says otherwise). */
export function fileStore(options: FileStoreOptions = {}): FileStore {
  return systemFileStore({ ...options, machine: { bootedAtMs: () => BOOTED_AT_MS, ...options.machine } });
}
