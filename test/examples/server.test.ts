/**
 * The server-half example runs here, so it cannot rot: oncely's client
 * against a Connect-style app (memory store) and a transactional Fetch app
 * (PostgreSQL), through a lost response, concurrent twins and a reused key.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { postgresForSuite } from '../helpers/postgres.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;
const bin = postgresForSuite('server example');

describe.runIf(bin !== undefined)('examples/server', () => {
  it('two apps, three faults each, one effect per payment', async () => {
    const { stdout } = await run(tsx, ['examples/server/main.ts'], { cwd: root, timeout: 90_000 });
    expect(stdout).toContain('Node http + Connect middleware (memory store)');
    expect(stdout).toContain('Fetch handler, transactional on PostgreSQL');
    expect(
      stdout.match(/✔ lost +response lost, resent with the same key: 201 replayed after 2 attempts/g),
    ).toHaveLength(2);
    expect(stdout.match(/✔ twins +two devices at once: both answered pay_2/g)).toHaveLength(2);
    expect(stdout.match(/✔ reuse +the paid key with another amount: 422, state unknown/g)).toHaveLength(2);
    expect(stdout.match(/✔ effects per key: lost=1, twins=1/g)).toHaveLength(2);
    expect(stdout).toContain('✔ Every payment took effect exactly once.');
    expect(stdout).not.toContain('✘');
  }, 120_000);
});
