/**
 * The universal entry must run in browsers and any JS runtime: its import
 * graph may never reach `node:*` built-ins or `idb-keyval`. Bundling with
 * esbuild (everything external except our own files) lists every import.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

async function externalImports(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'neutral',
    format: 'esm',
    logLevel: 'silent',
    plugins: [
      {
        name: 'externals',
        setup(b) {
          // Our own relative files are followed; every package or built-in is recorded as external.
          b.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
        },
      },
    ],
  });
  const imports = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const i of input.imports) if (i.external) imports.add(i.path);
  }
  return [...imports].sort();
}

describe('platform split', () => {
  it('oncely (universal) imports no node:* and no idb-keyval', async () => {
    const imports = await externalImports('src/index.ts');
    expect(
      imports.filter((i) => i.startsWith('node:') || i === 'idb-keyval' || /^(fs|path|http|crypto)$/.test(i)),
    ).toEqual([]);
    // The runtime dependencies it does use are the chosen ones.
    expect(imports.every((i) => ['ky', 'uuid', 'zod/mini', 'canonicalize'].includes(i))).toBe(true);
  });

  it('oncely/store (universal, for store authors) imports no node:* and no idb-keyval', async () => {
    const imports = await externalImports('src/store.ts');
    expect(imports.filter((i) => i.startsWith('node:') || i === 'idb-keyval')).toEqual([]);
  });

  it('oncely/browser imports no node:*', async () => {
    const imports = await externalImports('src/browser.ts');
    expect(imports.filter((i) => i.startsWith('node:'))).toEqual([]);
  });

  it('the check itself sees node imports where they are (testing entry)', async () => {
    expect(await externalImports('src/testing.ts')).toContain('node:http');
  });
});
