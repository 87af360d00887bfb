/**
 * The package as npm would publish it: `npm pack` (of the current build),
 * then publint (package.json against the packed files) and
 * @arethetypeswrong/cli (how TypeScript resolves every subpath's types).
 *
 * attw runs with the `esm-only` profile: oncely is ESM only (`type: module`,
 * no `require` condition), so CommonJS `require()` and the legacy `node10`
 * resolution are out of scope; Node16 ESM and bundler resolution must be clean.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

function run(file: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: root, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

let dir: string;
let tarball: string;
/** The paths `npm pack` put in the tarball. */
let packedFiles: string[];

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  dir = await mkdtemp(join(tmpdir(), 'oncely-pack-'));
  // --ignore-scripts: pack the build under test (`prepare` would rebuild dist/ while other tests read it).
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir]);
  expect(packed.code, packed.output).toBe(0);
  const [info] = JSON.parse(packed.output.slice(packed.output.indexOf('['))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  if (info === undefined) throw new Error(`npm pack printed no file:\n${packed.output}`);
  packedFiles = info.files.map((f) => f.path);
  tarball = join(dir, info.filename);
}, 90_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('packed package', () => {
  it('ships no source maps: they would point to ../src, which is not shipped (issue 32, item 7)', () => {
    expect(packedFiles.filter((path) => path.endsWith('.map'))).toEqual([]);
    expect(packedFiles.some((path) => path.startsWith('src/'))).toBe(false);
    expect(packedFiles).toContain('dist/index.js');
  });

  it('publint finds nothing, not even a suggestion', async () => {
    const data = await readFile(tarball);
    const tarballData = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
    const { messages, pkg } = await publint({ pack: { tarball: tarballData }, level: 'suggestion', strict: true });
    const lines = messages.map((m) => `${m.type}: ${formatMessage(m, pkg, { color: false }) ?? m.code}`);
    expect(lines).toEqual([]);
  }, 60_000);

  it('@arethetypeswrong/cli (esm-only profile) finds no problem', async () => {
    const attw = join(
      root,
      'node_modules/@arethetypeswrong/cli',
      require('@arethetypeswrong/cli/package.json').bin.attw,
    );
    const result = await run(process.execPath, [
      attw,
      tarball,
      '--profile',
      'esm-only',
      '--format',
      'ascii',
      '--no-color',
    ]);
    expect(result.code, result.output).toBe(0);
  }, 90_000);
});
