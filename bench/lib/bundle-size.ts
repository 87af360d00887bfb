/**
 * Browser bundle size of an oncely entry: bundled with esbuild for the
 * browser with every dependency included, minified, then gzipped (level 9).
 * Shared by `bench/bundle.ts` and `test/package/bundle-size.test.ts`.
 */
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface BundleSize {
  entry: string;
  minifiedBytes: number;
  gzipBytes: number;
  /** Minified bytes contributed by each package (`src` for oncely's own code). */
  minifiedByPackage: Record<string, number>;
}

/** The public entries and the source files they are built from. */
export const ENTRIES: Readonly<Record<string, string>> = {
  oncely: 'src/index.ts',
  'oncely/browser': 'src/browser.ts',
};

/**
 * Bundles `source` (a file under the repository root) or, with `imports`,
 * a module that imports just those names from it (what tree-shaking leaves
 * for an app that uses only them).
 */
export async function bundleSize(entry: string, imports?: readonly string[]): Promise<BundleSize> {
  const source = ENTRIES[entry];
  if (source === undefined) throw new Error(`unknown entry ${entry}`);
  const result = await build({
    ...(imports === undefined
      ? { entryPoints: [source] }
      : {
          stdin: {
            contents: `export { ${imports.join(', ')} } from './${source}';`,
            resolveDir: root,
            loader: 'ts',
          },
        }),
    absWorkingDir: root,
    bundle: true,
    write: false,
    minify: true,
    metafile: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error(`esbuild produced nothing for ${entry}`);
  const minifiedByPackage: Record<string, number> = {};
  for (const meta of Object.values(result.metafile.outputs)) {
    for (const [file, input] of Object.entries(meta.inputs)) {
      const pkg = file.includes('node_modules/') ? packageOf(file) : 'src';
      minifiedByPackage[pkg] = (minifiedByPackage[pkg] ?? 0) + input.bytesInOutput;
    }
  }
  return {
    entry: imports === undefined ? entry : `{ ${imports.join(', ')} } from '${entry}'`,
    minifiedBytes: output.contents.length,
    gzipBytes: gzipSync(output.contents, { level: 9 }).length,
    minifiedByPackage,
  };
}

/** Gzip bytes one package adds to an entry: the entry bundled with and without it. */
export async function gzipShareOf(entry: string, pkg: string): Promise<number> {
  const source = ENTRIES[entry];
  if (source === undefined) throw new Error(`unknown entry ${entry}`);
  const sizeWith = (await bundleSize(entry)).gzipBytes;
  const result = await build({
    entryPoints: [source],
    absWorkingDir: root,
    bundle: true,
    write: false,
    minify: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    external: [pkg, `${pkg}/*`],
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error(`esbuild produced nothing for ${entry}`);
  return sizeWith - gzipSync(output.contents, { level: 9 }).length;
}

function packageOf(file: string): string {
  const rest = file.slice(file.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
  return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? file);
}
