import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { cli } from '../helpers/cli.js';
import { fileStore } from '../helpers/machine.js';

let dir: string;
let server: ReferenceServer;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oncely-cli-'));
  server = await startReferenceServer();
  const client = createClient({ store: fileStore({ dir }), policy: { maxAttempts: 1 } });
  await client.send({ method: 'POST', url: `${server.url}/payments`, key: 'paid-1', json: { amount: 1 } });
  server.script({ kind: 'status', status: 422 });
  await client
    .send({ method: 'POST', url: `${server.url}/payments`, key: 'blocked-1', json: { amount: 2 } })
    .catch(() => undefined);
  await client.close();
});

afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('oncely CLI', () => {
  it('list shows every operation with its state, and filters by state', async () => {
    const all = await cli(dir, 'list');
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/succeeded\s+paid-1/);
    expect(all.stdout).toMatch(/blocked\s+blocked-1.*correctable/);
    expect(all.stdout).toContain('1 succeeded, 1 blocked');
    const blocked = await cli(dir, 'list', '--state', 'blocked');
    expect(blocked.stdout).toContain('blocked-1');
    expect(blocked.stdout).not.toContain('paid-1');
    const json = JSON.parse((await cli(dir, 'list', '--json')).stdout) as Array<{ key: string }>;
    expect(json.map((r) => r.key).sort()).toEqual(['blocked-1', 'paid-1']);
  });

  it('show prints the attempt timeline and the next step', async () => {
    const run = await cli(dir, 'show', 'blocked-1');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/state\s+blocked \(correctable\)/);
    expect(run.stdout).toMatch(/#1 \+\d+\.\d+s sent=definitely correctable 422/);
    expect(run.stdout).toMatch(/next step\s+Fix the request/);
  });

  it('retry resends a blocked operation with the same key', async () => {
    const run = await cli(dir, 'retry', 'blocked-1', '--header', 'Authorization: Bearer t');
    expect(run.stdout).toContain('blocked-1: succeeded');
    expect(run.code).toBe(0);
    expect(server.ledger.requestsFor('blocked-1').map((r) => r.key)).toEqual(['blocked-1', 'blocked-1']);
    expect(server.ledger.effectCount('blocked-1')).toBe(1);
  });

  it('discard forgets an operation; drain resumes pending ones with a progress bar', async () => {
    expect((await cli(dir, 'discard', 'blocked-1')).stdout).toContain('discarded');
    const store = fileStore({ dir });
    for (const key of ['p1', 'p2', 'p3']) {
      await store.put(
        sampleRecord(key, {
          request: {
            method: 'POST',
            url: `${server.url}/payments`,
            headers: {},
            body: { encoding: 'json', text: '{}' },
          },
          createdAt: Date.now(),
          deadlineAt: Date.now() + 60_000,
          nextAttemptAt: Date.now(),
        }),
      );
    }
    await store.close();
    const run = await cli(dir, 'drain');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('3/3');
    expect(run.stdout).toContain('drained 3 operation(s): 3 succeeded');
    expect(server.ledger.totalEffects()).toBe(4);
    expect((await cli(dir, 'list')).stdout).toContain('4 succeeded');
  });

  it('purge --expired removes finished operations past retention only', async () => {
    const store = fileStore({ dir });
    await store.put(sampleRecord('old', { state: 'succeeded', retainUntil: Date.now() - 1 }));
    await store.close();
    const run = await cli(dir, 'purge', '--expired');
    expect(run.stdout).toContain('removed 1 expired');
    expect((await cli(dir, 'show', 'old')).code).toBe(1);
    expect((await cli(dir, 'show', 'paid-1')).code).toBe(0);
    expect((await cli(dir, 'purge')).code).toBe(2);
  });

  it('clear errors: a missing store, an unknown key, a corrupt record', async () => {
    const missing = await cli(join(dir, 'nope'), 'list');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no store at .*nope/);
    const unknown = await cli(dir, 'show', 'never');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no operation with key never');
    // Corrupt the record file of paid-1.
    const file = (await readdir(dir)).find((name) => name.includes('paid-1'));
    expect(file).toBeDefined();
    await writeFile(join(dir, file as string), '{"v":1,"key":"paid-1",');
    const list = await cli(dir, 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('1 corrupt record(s) quarantined');
    expect((await cli(dir, 'list', '--state', 'quarantined')).stdout).toMatch(/corrupt\s+paid-1/);
    expect((await cli(dir, 'bogus')).code).toBe(2);
  });
});
