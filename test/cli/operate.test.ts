/**
 * Operating a store with the `oncely` binary as a script or a person at a
 * terminal does: discarding what may have taken effect (`--force`), drains
 * that stop (`--timeout`, `--once`, Ctrl-C) and give their leases back, the
 * list in write order, and what `show` says happens next. The built binary,
 * a real file store, a real reference server.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { CLI_BIN as bin, cli } from '../helpers/cli.js';
import { fileStore } from '../helpers/machine.js';

let dir: string;
let server: ReferenceServer;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oncely-cli-ops-'));
  server = await startReferenceServer();
});

afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Stores one operation the server answered 500 to: it may have taken effect (`unknown`). */
async function unknownOperation(key: string): Promise<void> {
  const client = createClient({ store: fileStore({ dir }), policy: { maxAttempts: 1 } });
  server.script({ kind: 'status', status: 500 });
  await client.send({ method: 'POST', url: `${server.url}/payments`, key, json: { amount: 1 } }).catch(() => undefined);
  await client.close();
}

/** Stores one operation waiting out the server's Retry-After (a minute), as a drain finds it. */
async function waitingOperation(key: string): Promise<void> {
  const store = fileStore({ dir });
  const url = `${server.url}/payments`;
  await store.put(
    sampleRecord(key, { request: { ...sampleRecord(key).request, url }, deadlineAt: Date.now() + 600_000 }),
  );
  await store.close();
  server.setOutage({ status: 503, retryAfter: 60 });
}

async function recordOf(key: string) {
  const store = fileStore({ dir });
  try {
    return await store.get(key);
  } finally {
    await store.close();
  }
}

describe('oncely discard', () => {
  it('refuses an operation that may have taken effect, in the CLI’s own words, and --force discards it saying so', async () => {
    await unknownOperation('u-1');
    const refused = await cli(dir, 'discard', 'u-1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('may have taken effect');
    expect(refused.stderr).toContain('oncely discard u-1 --force');
    expect(refused.stderr).not.toContain('{ force: true }');
    expect((await recordOf('u-1'))?.state).toBe('unknown');

    const forced = await cli(dir, 'discard', 'u-1', '--force');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('u-1: discarded (forced). It may have taken effect: 1 attempt(s)');
    expect(await recordOf('u-1')).toBeUndefined();
  });

  it('--force belongs to discard only', async () => {
    const run = await cli(dir, 'list', '--force');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--force only applies to discard');
  });
});

describe('oncely drain that stops', () => {
  it('--timeout S stops after S seconds and gives back the lease it held', async () => {
    await waitingOperation('w-1');
    // The point is a timeout that fires while the drain holds the lease (waiting out the Retry-After). On a loaded
    // machine the process can spend a whole second starting before its first send: then nothing was held, and the
    // drain runs again with a longer timeout.
    for (const timeoutS of [1, 3, 9]) {
      const started = performance.now();
      const run = await cli(dir, 'drain', '--timeout', String(timeoutS));
      expect(performance.now() - started).toBeLessThan(timeoutS * 1_000 + 15_000);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('stopped after --timeout');
      const record = await recordOf('w-1');
      expect(record?.state).toBe('pending');
      expect(record?.lease).toBeUndefined();
      if (server.ledger.requestsFor('w-1').length > 0) break;
    }
    expect(server.ledger.requestsFor('w-1').length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('Ctrl-C (SIGINT) gives back the lease before the process exits, with 130', async () => {
    await waitingOperation('w-2');
    const child = spawn(process.execPath, [bin, 'drain', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // The first attempt answered 503: the drain now holds the operation through its Retry-After wait.
    await server.waitForRequests(1);
    expect((await recordOf('w-2'))?.lease).toBeDefined();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('SIGINT: giving back the leases');
    const record = await recordOf('w-2');
    expect(record?.state).toBe('pending');
    expect(record?.lease).toBeUndefined();
  });

  it('--once leaves an operation another owner holds to it, instead of waiting for its lease', async () => {
    const store = fileStore({ dir });
    const lease = { owner: 'worker-7', epoch: 1, until: Date.now() + 120_000 };
    await store.put(sampleRecord('held-1', { state: 'in_flight', epoch: 1, lease, deadlineAt: Date.now() + 600_000 }));
    await store.close();
    const started = performance.now();
    const run = await cli(dir, 'drain', '--once', '--json');
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(JSON.parse(run.stdout)).toMatchObject({ driven: 0, timedOut: false });
    expect((await recordOf('held-1'))?.lease?.owner).toBe('worker-7');
  });
});

describe('oncely list and show', () => {
  it('lists operations in the order they were written, not by when they are due', async () => {
    const store = fileStore({ dir });
    // Written first, due last: the store lists by due time.
    await store.put(sampleRecord('first', { seq: 1, nextAttemptAt: 9_000 }));
    await store.put(sampleRecord('second', { seq: 2, nextAttemptAt: 5_000 }));
    await store.put(sampleRecord('third', { seq: 3, nextAttemptAt: 1_000 }));
    await store.close();
    const run = await cli(dir, 'list');
    const keys = run.stdout.split('\n').flatMap((line) => /^pending\s+(\S+)/.exec(line)?.[1] ?? []);
    expect(keys).toEqual(['first', 'second', 'third']);
  });

  it('show says what happens next to an open operation, past its deadline too', async () => {
    const now = Date.now();
    const maybe = {
      n: 1,
      owner: 'worker-1',
      startedAt: now - 120_000,
      endedAt: now - 119_000,
      class: 'ambiguous' as const,
      effect: 'unknown' as const,
      sent: 'maybe' as const,
    };
    const never = { ...maybe, class: 'not_sent' as const, sent: 'not' as const, effect: 'none' as const };
    const store = fileStore({ dir });
    await store.put(sampleRecord('due', { createdAt: now, deadlineAt: now + 600_000, nextAttemptAt: now + 30_000 }));
    const past = { createdAt: now - 130_000, deadlineAt: now - 60_000 };
    await store.put(sampleRecord('past-maybe', { ...past, attempts: [maybe] }));
    await store.put(sampleRecord('past-never', { ...past, attempts: [never] }));
    await store.close();
    expect((await cli(dir, 'show', 'due')).stdout).toMatch(
      /next\s+attempt #1 in \d+\.\d+s, on the next drain or resume/,
    );
    expect((await cli(dir, 'show', 'past-maybe')).stdout).toMatch(
      /next\s+past its deadline: the next drain makes one last attempt with the same key/,
    );
    expect((await cli(dir, 'show', 'past-never')).stdout).toMatch(
      /next\s+past its deadline: the next drain ends it failed without sending/,
    );
  });
});
