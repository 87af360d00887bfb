/**
 * The `oncely` CLI's surface: flags, usage errors, --json on every command,
 * what retry and drain wait for, the policy they resume under, and stores it
 * cannot use. Runs the built binary against real temp directories and a real
 * reference server, as a user would.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmod, cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshotOf } from '../../src/flow/decide/policy-snapshot.js';
import { createClient, type OperationRecord, type PolicyOptions } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { fileStore } from '../helpers/machine.js';

const bin = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Cli {
  node: string;
  bin: string;
  uid?: number;
  gid?: number;
}

function oncely(args: string[], cli: Cli = { node: process.execPath, bin }): Promise<Run> {
  const { node, bin: script, ...ids } = cli;
  return new Promise((resolve) => {
    execFile(node, [script, ...args], { timeout: 30_000, ...ids }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

/** One line, no stack frame: what a user sees for every mistake. */
function expectOneLine(text: string): void {
  expect(text.trim().split('\n')).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
}

let dir: string;
let server: ReferenceServer;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oncely-cli-surface-'));
  server = await startReferenceServer();
});

afterEach(async () => {
  await server.close();
  await chmod(dir, 0o700).catch(() => undefined);
  for (const sub of ['journal', 'quarantine']) await chmod(join(dir, sub), 0o700).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

/** A pending record, due now, carrying the policy `policy` resolves to (as a client stores it). */
function pending(key: string, policy: PolicyOptions, overrides: Partial<OperationRecord> = {}): OperationRecord {
  const resolved = createClient({ policy }).policyFor('POST', `${server.url}/payments`);
  const now = Date.now();
  return sampleRecord(key, {
    request: { method: 'POST', url: `${server.url}/payments`, headers: {}, body: { encoding: 'json', text: '{}' } },
    policySnapshot: snapshotOf(resolved),
    createdAt: now,
    deadlineAt: now + 60_000,
    nextAttemptAt: now,
    ...overrides,
  });
}

async function put(...records: OperationRecord[]): Promise<void> {
  const store = fileStore({ dir });
  for (const record of records) await store.put(record);
  await store.close();
}

// No wait between attempts: the tests read what is printed, not how long it took.
const NO_DELAY: PolicyOptions = { backoff: { baseDelayMs: 0, maxDelayMs: 0 }, budget: false };

describe('flags and usage errors', () => {
  it('--version prints the package version, as text or JSON', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const text = await oncely(['--version']);
    expect(text).toMatchObject({ code: 0, stdout: `oncely ${version}\n` });
    expect(JSON.parse((await oncely(['--version', '--json'])).stdout)).toEqual({ version });
  });

  it.each([
    [['list', '--bogus'], /^oncely: unknown option --bogus \(oncely --help for usage\)$/],
    [['list', '--jsn'], /^oncely: unknown option --jsn \(did you mean --json\?\)/],
    [['retry', 'k', '--header', 'no colon here'], /^oncely: --header needs "Name: value".*\(got "no colon here"\)/],
    [['retry', 'k', '--header', 'Bad Name: x'], /^oncely: --header needs "Name: value"/],
    [['list', '--dir'], /^oncely: --dir needs a value/],
    [['show'], /^oncely: show needs a key: oncely show <key>/],
    [['show', 'a', 'b'], /^oncely: unexpected argument "b" after show/],
    [['lsit'], /^oncely: unknown command "lsit" \(did you mean "list"\?\)/],
    [['drain', '--state', 'pending'], /^oncely: --state only applies to list/],
  ])('%j is a one-line usage error, exit 2', async (args, message) => {
    const run = await oncely([...args, ...(args.includes('--dir') ? [] : ['--dir', dir])]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expectOneLine(run.stderr);
    expect(run.stderr.trim()).toMatch(message);
  });

  it('usage errors are JSON with --json', async () => {
    const run = await oncely(['list', '--bogus', '--json', '--dir', dir]);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toEqual({
      error: { code: 'usage', message: 'unknown option --bogus (oncely --help for usage)' },
    });
  });
});

describe('stores the CLI cannot use', () => {
  it('a store path that is a file', async () => {
    const file = join(dir, 'records.json');
    await writeFile(file, '{}');
    const run = await oncely(['list', '--dir', file]);
    expect(run.code).toBe(2);
    expectOneLine(run.stderr);
    expect(run.stderr).toContain(`oncely: ${file} is a file, not a store: a file store is a directory`);
  });

  it('a read-only store: list works, writing commands say why they cannot', async () => {
    await put(sampleRecord('k1', { state: 'blocked' }));
    // Root writes through permission bits: run the CLI as nobody, so the store is read-only for real.
    const asOther = process.getuid?.() === 0 ? await cliForNobody() : { node: process.execPath, bin };
    await readOnlyForOthers(dir);
    const listed = await oncely(['list', '--dir', dir], asOther);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/blocked\s+k1/);
    for (const args of [['discard', 'k1'], ['retry', 'k1'], ['drain'], ['purge', '--expired']]) {
      const run = await oncely([...args, '--dir', dir], asOther);
      expect(run.code).toBe(2);
      expectOneLine(run.stderr);
      expect(run.stderr).toContain(`oncely: the store at ${dir} is read-only`);
      expect(run.stderr).toContain(`${args[0]} writes to it; list and show work without writing`);
    }
  });
});

const NOBODY = 65534;

/**
 * The built CLI, runnable by `nobody` wherever this checkout lives (a clone
 * under a private home or temp directory cannot be entered by other users):
 * `dist`, the runtime dependencies and, if `nobody` cannot run it where it
 * is, the node binary, copied into a world-readable directory.
 */
async function cliForNobody(): Promise<Cli> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const box = await mkdtemp(join(tmpdir(), 'oncely-cli-nobody-'));
  boxes.push(box);
  await cp(join(root, 'dist'), join(box, 'dist'), { recursive: true });
  await cp(join(root, 'package.json'), join(box, 'package.json'));
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(pkg.dependencies)) {
    await cp(join(root, 'node_modules', name), join(box, 'node_modules', name), { recursive: true, dereference: true });
  }
  let node = process.execPath;
  if (spawnSync(node, ['--version'], { uid: NOBODY, gid: NOBODY }).status !== 0) {
    node = join(box, 'node');
    await cp(process.execPath, node);
  }
  await openToAll(box);
  return { node, bin: join(box, 'dist', 'cli', 'main.js'), uid: NOBODY, gid: NOBODY };
}

/** Readable (and directories enterable, binaries runnable) by every user. */
async function openToAll(path: string): Promise<void> {
  const info = await stat(path);
  if (info.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await openToAll(join(path, entry));
  } else await chmod(path, info.mode & 0o111 ? 0o755 : 0o644);
}

const boxes: string[] = [];
afterAll(async () => {
  await Promise.all(boxes.map((box) => rm(box, { recursive: true, force: true })));
});

/** Everything readable by any user and writable by none (the store writes private files: 0600 / 0700). */
async function readOnlyForOthers(path: string): Promise<void> {
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await readOnlyForOthers(child);
    else await chmod(child, 0o444);
  }
  await chmod(path, 0o555);
}

describe('--json on every command', () => {
  it('show, retry, discard, drain, purge and a missing key', async () => {
    await put(
      pending('j-blocked', NO_DELAY, { state: 'blocked' }),
      pending('j-open', NO_DELAY),
      sampleRecord('j-old', { state: 'succeeded', retainUntil: Date.now() - 1 }),
    );
    const shown = JSON.parse((await oncely(['show', 'j-blocked', '--json', '--dir', dir])).stdout);
    expect(shown).toMatchObject({ key: 'j-blocked', state: 'blocked' });

    const retried = await oncely(['retry', 'j-blocked', '--json', '--dir', dir]);
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout)).toMatchObject({ key: 'j-blocked', state: 'succeeded', ok: true, waits: [] });

    // Before drain: a drain sweeps expired records too.
    expect(JSON.parse((await oncely(['purge', '--expired', '--json', '--dir', dir])).stdout)).toEqual({ removed: 1 });

    const drained = await oncely(['drain', '--json', '--dir', dir]);
    expect(drained.stderr).toBe(''); // no progress bar in JSON mode
    expect(JSON.parse(drained.stdout)).toMatchObject({ driven: 1, succeeded: 1, failures: [], waits: [] });

    expect(JSON.parse((await oncely(['discard', 'j-open', '--json', '--dir', dir])).stdout)).toEqual({
      key: 'j-open',
      discarded: true,
      mayHaveTakenEffect: false,
    });
    const missing = await oncely(['show', 'nope', '--json', '--dir', dir]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: { code: 'not_found', message: 'no operation with key nope' } });
  });

  it('an oncely error is one JSON line with its code and next step', async () => {
    await put(pending('busy', NO_DELAY, { state: 'succeeded' }));
    const run = await oncely(['retry', 'busy', '--json', '--dir', dir]);
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe('invalid_state');
    expect(error.message).toMatch(/Only blocked or unknown operations can be retried/);
  });
});

describe('what retry and drain wait for, under the policy stored in each record', () => {
  it('retry prints the next attempt time and why, and follows the record policy (418 retryable there)', async () => {
    // The CLI's own default policy would stop at a 418 (no rule: permanent); the record's says retry.
    await put(pending('r-1', { ...NO_DELAY, classify: { 418: 'retryable' } }, { state: 'blocked' }));
    server.script({ kind: 'status', status: 418 });
    const run = await oncely(['retry', 'r-1', '--dir', dir]);
    expect(run.stdout).toBe('r-1: succeeded\n');
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^r-1: next attempt at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \(in 0 ms\): attempt 1 ended retryable: status 418 \(endpoint override\)$/m,
    );
    expect(server.ledger.requestsFor('r-1')).toHaveLength(2);
  });

  it('drain shows progress, the API-down reason, and leases another owner holds until when', async () => {
    // Long enough to outlive the CLI's start-up on a busy machine; the drain then watches it that long (and at
    // least the holder's attempt timeout + lease length, 2 s here, plus a second) and takes over.
    const leasedUntil = Date.now() + 3_000;
    const quick = { ...NO_DELAY, attemptTimeoutMs: 1_000 };
    await put(
      pending('d-down', NO_DELAY),
      pending('d-leased', quick, { state: 'in_flight', lease: { owner: 'worker-7', until: leasedUntil } }),
    );
    server.script({ kind: 'status', status: 503, match: { key: 'd-down' } });
    const rules = await mkdtemp(join(tmpdir(), 'oncely-cli-rules-'));
    await writeFile(join(rules, 'rules.json'), JSON.stringify({ leaseMs: 1_000 }));
    const run = await oncely(['drain', '--config', join(rules, 'rules.json'), '--dir', dir]);
    await rm(rules, { recursive: true, force: true });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('drained 2 operation(s): 2 succeeded, 0 not');
    expect(run.stderr).toContain('0/2');
    expect(run.stderr).toContain('2/2');
    expect(run.stderr).toMatch(
      /^d-leased: leased until \S+ \S+ \(in \d+ ms\): leased by another owner \(worker-7\); taken over once its lease stays unchanged/m,
    );
    expect(run.stderr).toMatch(/^d-down: next attempt at \S+ \S+ \(in 0 ms\): attempt 1 ended retryable: status 503/m);
    expect(server.ledger.effectCount('d-down')).toBe(1);
    expect(server.ledger.effectCount('d-leased')).toBe(1);
  });

  it('--config gives the endpoint rule a record names when it carries no policy of its own', async () => {
    const old = pending('legacy', NO_DELAY, { policy: 'POST /payments' });
    delete old.policySnapshot;
    await put(old);
    // Without the rules, in a copy of the store (the failed claim keeps its lease until it expires).
    const copy = await mkdtemp(join(tmpdir(), 'oncely-cli-copy-'));
    const config = join(copy, 'rules.json');
    const bad = join(copy, 'bad.json');
    try {
      const store = fileStore({ dir: copy });
      await store.put(old);
      await store.close();
      const without = await oncely(['drain', '--dir', copy]);
      expect(without.code).toBe(1);
      expect(without.stdout).toContain('created under endpoint rule "POST /payments", which this client does not have');
      expect(without.stdout).toContain("Here: pass the app's endpoint rules with --config rules.json.");

      await writeFile(config, JSON.stringify({ endpoints: { 'POST /payments': { profile: 'stripe' } } }));
      const run = await oncely(['drain', '--config', config, '--dir', dir]);
      expect(run.stdout).toContain('drained 1 operation(s): 1 succeeded');
      expect(run.code).toBe(0);
      expect(server.ledger.effectCount('legacy')).toBe(1);

      await writeFile(bad, JSON.stringify({ endpoints: { 'ANY /payments': {} } }));
      const refused = await oncely(['drain', '--config', bad, '--dir', dir]);
      expect(refused.code).toBe(2);
      expectOneLine(refused.stderr);
      expect(refused.stderr).toMatch(/^oncely: --config .*bad\.json: Invalid option `endpoints\["ANY \/payments"\]`/);
      await writeFile(bad, JSON.stringify({ polcy: {} }));
      const typo = await oncely(['list', '--config', bad, '--dir', dir]);
      expect(typo.code).toBe(2);
      expect(typo.stderr).toMatch(/Invalid option `polcy`: unknown option: did you mean `policy`\?/);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});
