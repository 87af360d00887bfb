/**
 * The fleet example runs here (with 120 payments instead of 1,000), so it
 * cannot rot: four workers on one PostgreSQL table, one SIGKILLed, every
 * payment taking effect exactly once.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { postgresForSuite } from '../helpers/postgres.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;
const bin = postgresForSuite('fleet example');

describe.runIf(bin !== undefined)('examples/fleet', () => {
  it('four workers drain one table; one is killed; every payment took effect once', async () => {
    const { stdout } = await run(tsx, ['examples/fleet/main.ts', '120'], { cwd: root, timeout: 120_000 });
    expect(stdout).toContain('✔ Every payment took effect exactly once.');
    expect(stdout).toMatch(/worker-2: SIGKILLed after \d+ of 120 effects/);
    expect(stdout).toMatch(/payments stored: +120 \(succeeded 120\)/);
    expect(stdout).toMatch(/effects per key: +120 keys × 1$/m);
    expect(stdout.match(/queue drained/g)).toHaveLength(3);
    expect(stdout).not.toContain('✘');
  }, 150_000);
});
