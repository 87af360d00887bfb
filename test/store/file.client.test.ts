/**
 * The file store under the real client and the reference server: corrupt
 * files on resume, and what ends up on disk.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type Outcome, type QuarantineEntry } from '../../src/node.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { enqueueOffline } from '../helpers/file-offline.js';
import { dirsUnder, filesUnder, modeOf, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
});

const quickPolicy = {
  attemptTimeoutMs: 2_000,
  backoff: { baseDelayMs: 5, maxDelayMs: 50 },
  retryAfter: { jitterMs: 10 },
};

describe('fileStore with the client', () => {
  it('quarantines a truncated and a garbage record on resume; the other operations complete', async () => {
    server = await startReferenceServer();
    const dir = tempDir();
    const keys = await enqueueOffline(
      dir,
      server.url,
      Array.from({ length: 6 }, (_, i) => ({ method: 'POST', url: '/payments', json: { op: i, amount: 100 + i } })),
    );
    const [truncated = '', garbage = '', ...healthy] = keys;
    const paths = fileStore({ dir });
    const whole = fs.readFileSync(paths.pathOf(truncated));
    fs.truncateSync(paths.pathOf(truncated), Math.floor(whole.length / 2));
    fs.writeFileSync(paths.pathOf(garbage), randomBytes(300));
    const garbageBytes = fs.readFileSync(paths.pathOf(garbage), 'utf8');

    const store = fileStore({ dir });
    const reported: QuarantineEntry[] = [];
    store.onQuarantine((entry) => reported.push(entry));
    const client = createClient({ store, baseUrl: server.url, policy: quickPolicy });
    const events: string[] = [];
    client.on('quarantined', (event) => events.push(event.id));

    const outcomes: Outcome[] = [];
    const summary = await client.resume({ onOutcome: (o) => void outcomes.push(o) });
    expect(summary).toEqual({
      driven: 4,
      succeeded: 4,
      failed: 0,
      blocked: 0,
      unknown: 0,
      unfinished: 0,
      heldElsewhere: 0,
    });
    expect(outcomes.map((o) => [o.key, o.state]).sort()).toEqual(healthy.map((k) => [k, 'succeeded']).sort());
    for (const key of healthy) expect(server.ledger.effectCount(key)).toBe(1);
    expect(server.ledger.effectCount(truncated) + server.ledger.effectCount(garbage)).toBe(0);

    expect(reported.map((e) => e.id).sort()).toEqual([truncated, garbage].sort());
    expect(events.sort()).toEqual([truncated, garbage].sort());
    const listed = await client.quarantined();
    expect(listed.map((e) => e.id).sort()).toEqual([truncated, garbage].sort());
    for (const entry of listed) expect(entry.problems.length).toBeGreaterThan(0);
    expect(listed.find((e) => e.id === truncated)?.raw).toBe(whole.toString('utf8', 0, Math.floor(whole.length / 2)));
    expect(listed.find((e) => e.id === garbage)?.raw).toBe(garbageBytes);
    // Moved aside, not deleted: the bytes are in quarantine/, and gone from the records.
    expect(fs.readdirSync(join(dir, 'quarantine'))).toHaveLength(2);
    expect(await client.get(truncated)).toBeUndefined();
    expect((await client.list()).map((r) => r.key).sort()).toEqual([...healthy].sort());
    await client.close();
    await store.close(); // a client leaves open a store it was given

    // A later process sees the same quarantine (it lives on disk), and no new reports.
    const later = fileStore({ dir });
    expect((await later.quarantined()).map((e) => e.id).sort()).toEqual([truncated, garbage].sort());
    expect(await later.list({ state: 'succeeded' })).toHaveLength(healthy.length);
    await later.close();
  });

  it('writes no credentials to disk; files are 0600 and directories 0700', async () => {
    server = await startReferenceServer({
      authorize: (authorization) => authorization === 'Bearer secret',
      handle: (req) => ({
        status: (req.body as { op?: number }).op === 2 ? 422 : 201,
        body: { id: `res_${req.effectNumber}` },
        headers: { 'set-cookie': 'sid=cookie-secret-value; HttpOnly' },
      }),
    });
    const dir = join(tempDir(), 'app', '.oncely');
    const store = fileStore({ dir });
    const client = createClient({
      store,
      baseUrl: server.url,
      // x-client is stored because the policy names it (stored headers are an allow-list).
      policy: { ...quickPolicy, storeHeaders: ['x-client'] },
      headers: () => ({ authorization: 'Bearer secret', cookie: 'session=cookie-secret-value' }),
    });
    // Credentials given as stored headers are refused before anything is written.
    await expect(
      client.send({ method: 'POST', url: '/payments', json: { op: 9 }, headers: { Authorization: 'Bearer secret' } }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    const sent = await Promise.all(
      [0, 1, 2].map((op) =>
        client
          .enqueue({ method: 'POST', url: '/payments', json: { op }, headers: { 'x-client': 'tests' } })
          .then((e) => e.settled),
      ),
    );
    expect(sent.map((o) => o.state)).toEqual(['succeeded', 'succeeded', 'blocked']);
    for (const o of sent) expect(server.ledger.requestsFor(o.key).length).toBeGreaterThan(0);
    // A quarantined file must keep the same protection.
    fs.writeFileSync(store.pathOf(sent[0]?.key ?? ''), 'garbage');
    await store.get(sent[0]?.key ?? '');
    // The journal holds every record version written: the same protection, while it exists.
    const segments = filesUnder(join(dir, 'journal'));
    expect(segments.length).toBeGreaterThan(0);
    for (const file of segments) {
      expect(fs.readFileSync(file, 'utf8'), relative(dir, file)).not.toMatch(/secret|bearer|authorization|cookie/i);
      expect(modeOf(file), relative(dir, file)).toBe(0o600);
    }
    await client.close();

    const files = filesUnder(dir);
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      expect(text, relative(dir, file)).not.toMatch(/secret|bearer|authorization|cookie/i);
      expect(modeOf(file), relative(dir, file)).toBe(0o600);
    }
    const dirs = dirsUnder(dir);
    expect(dirs.map((d) => relative(dir, d)).sort()).toEqual(['', 'journal', 'quarantine']);
    for (const d of dirs) expect(modeOf(d), relative(dir, d) || '.').toBe(0o700);
    // The directories the store had to create on the way are private too.
    expect(modeOf(join(dir, '..'))).toBe(0o700);
    await store.close(); // after the checks: its checkpoint deletes the journal segment they read
  });

  it('defaults to .oncely under the working directory', async () => {
    const cwd = process.cwd();
    const base = tempDir();
    process.chdir(base);
    try {
      const store = fileStore();
      expect(store.dir).toBe(join(fs.realpathSync(base), '.oncely'));
    } finally {
      process.chdir(cwd);
    }
  });
});
