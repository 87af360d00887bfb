/**
 * Every subpath export resolves through the package's own `exports` map (as
 * a user's `import 'oncely/...'` would) to a built module with its types.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  name: string;
  type: string;
  sideEffects: boolean;
  engines: { node: string };
  exports: Record<string, string | { types: string; default: string }>;
};

describe('package exports', () => {
  it('is an ESM package without side effects, for Node >= 20', () => {
    expect(pkg.name).toBe('oncely');
    expect(pkg.type).toBe('module');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.engines.node).toBe('>=20');
    expect(Object.keys(pkg.exports).sort()).toEqual([
      '.',
      './browser',
      './node',
      './package.json',
      './postgres',
      './testing',
    ]);
  });

  it.each(['.', './browser', './node', './postgres', './testing'])(
    '%s points at built JS and types that exist',
    (subpath) => {
      const target = pkg.exports[subpath];
      expect(typeof target).toBe('object');
      if (typeof target !== 'object') return;
      expect(existsSync(`${root}${target.default}`)).toBe(true);
      expect(existsSync(`${root}${target.types}`)).toBe(true);
    },
  );

  it.each([
    ['oncely', ['createClient', 'memoryStore', 'deriveKey', 'isOncelyError']],
    ['oncely/browser', ['createClient', 'indexedDbStore']],
    ['oncely/node', ['createClient', 'fileStore']],
    ['oncely/testing', ['createFakeRuntime', 'storeContract', 'startReferenceServer']],
    ['oncely/postgres', ['postgresStore']],
  ])('import("%s") resolves by name and exposes its API', async (specifier, names) => {
    // Self-reference: Node resolves the package's own name through `exports`.
    const mod = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
    for (const name of names) expect(typeof mod[name], `${specifier} → ${name}`).toBe('function');
  });

  it('package.json is exported', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(`${root}package.json`);
    expect(require.resolve('oncely/package.json')).toBe(`${root}package.json`);
  });
});
