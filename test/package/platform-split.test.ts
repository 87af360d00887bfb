/**
 * The universal entry must run in browsers and any JS runtime: its import
 * graph may never reach `node:*` built-ins or `idb-keyval`. Bundling with
 * esbuild (everything external except our own files) lists every import.
 *
 * The compiler enforces the same split on types: browser files compile
 * with the DOM library and no Node types (tsconfig.browser.json), Node
 * files with Node types and no DOM (tsconfig.node.json), the universal core
 * with neither Node types nor any platform file (tsconfig.core.json). The
 * core is also compiled as part of both others, so it must type-check in a
 * world without DOM and in one without Node.
 */
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

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
    expect(imports.every((i) => ['uuid', 'canonicalize'].includes(i))).toBe(true);
  });

  it('no entry loads zod: records are checked by model/spec.ts, the zod schema only gives types', async () => {
    // Loading zod/mini costs a Node process ~6 MB of memory and 90 modules (its locales included).
    for (const entry of ['src/index.ts', 'src/node.ts', 'src/browser.ts', 'src/store.ts', 'src/testing.ts']) {
      const imports = await externalImports(entry);
      expect(
        imports.filter((i) => i.startsWith('zod')),
        entry,
      ).toEqual([]);
    }
  });

  it('oncely/store (universal, for store authors) imports no node:* and no idb-keyval', async () => {
    const imports = await externalImports('src/store.ts');
    expect(imports.filter((i) => i.startsWith('node:') || i === 'idb-keyval')).toEqual([]);
  });

  it('oncely/opentelemetry imports @opentelemetry/api alone: never an SDK, no node:*', async () => {
    expect(await externalImports('src/opentelemetry.ts')).toEqual(['@opentelemetry/api']);
  });

  it('oncely/server (Fetch handlers for workers, Deno, Bun too) imports no node:*, no pg', async () => {
    const imports = await externalImports('src/server.ts');
    // zod checks its options once, at construction (a server process, not a page bundle). The
    // fingerprint's canonical JSON is its own (written for what JSON.parse returns).
    expect(imports).toEqual(['zod']);
  });

  it('oncely/browser imports no node:*', async () => {
    const imports = await externalImports('src/browser.ts');
    expect(imports.filter((i) => i.startsWith('node:'))).toEqual([]);
  });

  it('the check itself sees node imports where they are (testing entry)', async () => {
    expect(await externalImports('src/testing.ts')).toContain('node:http');
  });
});

type Platform = 'core' | 'browser' | 'node';
const PLATFORMS: readonly Platform[] = ['core', 'browser', 'node'];

function parsed(platform: Platform): ts.ParsedCommandLine {
  const path = join(root, `tsconfig.${platform}.json`);
  const config = ts.readConfigFile(path, ts.sys.readFile);
  if (config.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, path);
}

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name).split('\\').join('/'));
}

// Inside the repository, so `types: ['node']` resolves from node_modules as it does for src/.
const cache = join(root, 'node_modules', '.cache');
fs.mkdirSync(cache, { recursive: true });
const scratch = fs.mkdtempSync(join(cache, 'platform-split-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const PROBES = {
  nodeOnly: 'export const pid: number = process.pid;\nexport const b = Buffer.from("x");\n',
  domOnly: 'export const title: string = document.title;\nexport const w = window.innerWidth;\n',
  universal: 'export const r = new Request("https://a.test/", { signal: AbortSignal.timeout(1) });\n',
};
type Probe = keyof typeof PROBES;

/** The compiler's errors for each probe under `platform`'s options (one program per platform: each costs seconds). */
function errorsUnder(platform: Platform): Record<Probe, string> {
  const files = Object.entries(PROBES).map(([probe, code]) => {
    const file = join(scratch, `${platform}-${probe}.ts`);
    fs.writeFileSync(file, code);
    return [probe as Probe, file] as const;
  });
  const program = ts.createProgram(
    files.map(([, file]) => file),
    parsed(platform).options,
  );
  const errors = {} as Record<Probe, string>;
  for (const [probe, file] of files) {
    const source = program.getSourceFile(file);
    const diagnostics = source === undefined ? [] : ts.getPreEmitDiagnostics(program, source);
    errors[probe] = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n');
  }
  return errors;
}

describe('platform split: the compiler', () => {
  it('every file in src/ belongs to exactly one of the core, browser and node configs', () => {
    const owners = new Map<string, Platform[]>();
    for (const platform of PLATFORMS) {
      for (const file of parsed(platform).fileNames) {
        const name = relative(root, file).split('\\').join('/');
        owners.set(name, [...(owners.get(name) ?? []), platform]);
      }
    }
    const files = sourceFiles('src');
    expect(files.length).toBeGreaterThan(50);
    expect(files.filter((file) => owners.get(file)?.length !== 1)).toEqual([]);
    expect(owners.get('src/browser/client.ts')).toEqual(['browser']);
    expect(owners.get('src/store/indexeddb.ts')).toEqual(['browser']);
    expect(owners.get('src/store/file/store.ts')).toEqual(['node']);
    expect(owners.get('src/cli/main.ts')).toEqual(['node']);
    expect(owners.get('src/flow/drive/run.ts')).toEqual(['core']);
  });

  it('browser and core code see no Node types; node code sees no DOM', () => {
    const core = errorsUnder('core');
    const browser = errorsUnder('browser');
    const node = errorsUnder('node');
    expect(core.nodeOnly).toMatch(/Cannot find name 'process'/);
    expect(browser.nodeOnly).toMatch(/Cannot find name 'process'/);
    expect(node.domOnly).toMatch(/Cannot find name 'document'/);
    expect([node.nodeOnly, browser.domOnly, core.universal, browser.universal, node.universal]).toEqual([
      '',
      '',
      '',
      '',
      '',
    ]);
  }, 60_000);

  it('npm run typecheck checks every config, tests included', () => {
    const script = (
      JSON.parse(fs.readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts.typecheck;
    for (const config of ['tsconfig.core.json', 'tsconfig.browser.json', 'tsconfig.node.json', 'tsconfig.json']) {
      expect(script).toContain(`-p ${config}`);
    }
  });
});
