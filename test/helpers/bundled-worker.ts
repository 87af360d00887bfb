/**
 * A test's child process from a TypeScript entry, bundled once with esbuild
 * (a bundled child starts in ~0.2 s, `node --import tsx` in ~0.8 s on a
 * small CI box), with the stdout-line protocol of the other workers
 * (file-worker.ts): `onLine`, `exited`, `kill()` (SIGKILL).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Worker, watchWorker } from './file-worker.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface BundledScript {
  /** Bundles now (once): a test file does it before its timed tests. Resolves with the bundle's path. */
  ready(): Promise<string>;
  /** Starts the bundled entry with `config` as its one JSON argument. */
  spawn(config: unknown): Promise<Worker>;
  dispose(): void;
}

/** `entry` (a `file:` URL of a .ts file) bundled into a temp directory on first use. */
export function bundledScript(entry: URL): BundledScript {
  let built: { dir: string; file: Promise<string> } | undefined;
  const file = (): Promise<string> => {
    if (built === undefined) {
      // Inside the repository, not the OS temp dir: what the bundle loads at run time (`pg`, loaded lazily by
      // oncely/postgres) resolves from the bundle's own directory, so it must see node_modules.
      const cache = join(REPO_ROOT, 'node_modules', '.cache');
      fs.mkdirSync(cache, { recursive: true });
      const dir = fs.mkdtempSync(join(cache, 'oncely-bundle-'));
      const outfile = join(dir, 'worker.mjs');
      const done = build({
        entryPoints: [fileURLToPath(entry)],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        outfile,
        logLevel: 'error',
        // pg is CommonJS: its require() of Node built-ins needs a real require in the ESM bundle.
        external: ['pg-native'],
        banner: {
          js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);",
        },
      }).then(() => outfile);
      built = { dir, file: done };
    }
    return built.file;
  };
  return {
    ready: file,
    async spawn(config) {
      return watchWorker(spawn(process.execPath, [await file(), JSON.stringify(config)], { cwd: REPO_ROOT }));
    },
    dispose() {
      if (built !== undefined) fs.rmSync(built.dir, { recursive: true, force: true });
      built = undefined;
    },
  };
}
