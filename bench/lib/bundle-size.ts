/**
 * Browser bundle size of an oncely entry: bundled with esbuild for the
 * browser with every dependency included, minified, then gzipped (level 9).
 * Shared by `bench/bundle.ts` and `test/package/bundle-size.test.ts`.
 *
 * Two measurements of the same code:
 * - the whole entry as one file (every `import()` inlined): all an app can
 *   ever load from it;
 * - the same code split as an app's bundler splits it (esbuild `splitting`):
 *   the start-up path is the entry chunk plus the chunks it imports
 *   statically (what a page loads and runs before its own code starts); the
 *   lazy chunks are those reached only through `import()` (the client starts
 *   loading its working parts as it is created, see src/client.ts). Each
 *   chunk is gzipped on its own, as a server sends it;
 * - what a page pays before its first `send`: the start-up path plus every
 *   chunk the client loads with `import()` while it is created and sends
 *   (all of them except those reached only through `LOADED_LATER`).
 */
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type BuildOptions, build, type Metafile } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Bytes of a set of chunks. */
export interface ChunkSet {
  chunks: number;
  minifiedBytes: number;
  /** Each chunk gzipped on its own, summed. */
  gzipBytes: number;
  /** Minified bytes contributed by each package (`src` for oncely's own code). */
  minifiedByPackage: Record<string, number>;
  /** The source files with code in these chunks (paths from the package root; dependencies under node_modules). */
  modules: string[];
}

/**
 * Modules loaded with `import()` only by what a page does later, if ever:
 * the live view on the first `subscribe`, `clear()`, reconciliation (a rule
 * with a `reconcile` hook whose operation would end `unknown`, or a call to
 * `reconcile`/`settle`), the resume pass (the first `resume()`: the browser
 * client's drain loop makes it only once it finds due work), `retry` and
 * `discard`, the error of an operation that did not succeed, what follows an attempt that did not simply
 * succeed (its class, hint, retry or stop: loaded after the first answer), the record validator, the browser's
 * storage checks (loaded at start-up, never waited for by a send), the checks of a request's optional parts (a
 * URL's port or query, `meta`: loaded by a request that has one), the browser's memory store (loaded by the first
 * read that sends no key), the texts of an interrupted operation. Their chunks (and the chunks only they import) are
 * the only ones left out of `firstSend`; every other `import()` counts,
 * since the client starts it as it is created.
 */
export const LOADED_LATER: readonly string[] = [
  'src/browser/subscribe.ts',
  'src/browser/clear.ts',
  'src/flow/calls/reconcile.ts',
  // Only reconcile.ts imports these: they travel in its chunk.
  'src/flow/drive/reconcile.ts',
  'src/flow/decide/reconcile.ts',
  'src/policy/reconcile.ts',
  // The resume pass and the call around it (resume-call.ts; claim-pass.ts, drive-list.ts, resume-order.ts, which
  // only they import): loaded on the first `resume()`, which the browser's drain loop calls only once its listing
  // finds due work (or a drain is asked for).
  'src/flow/calls/resume-call.ts',
  'src/flow/calls/resume-pass.ts',
  'src/flow/calls/claim-pass.ts',
  'src/flow/calls/drive-list.ts',
  'src/flow/calls/resume-order.ts',
  // The packed listing the pass reads (packed-summaries.ts and the strings it packs, packed-strings.ts): only the
  // pass's modules import them at run time (packed-listing.ts, on the send path, imports their types).
  'src/store/packed-summaries.ts',
  'src/store/packed-strings.ts',
  // `retry(key)` and `discard(key)`: loaded on the first of them, calls an app makes about an operation that did not
  // simply succeed.
  'src/flow/calls/remedies.ts',
  // The error of an operation that ended other than succeeded (and provider-errors.ts, which only it imports): loaded
  // the first time a caller meets one; a page whose first send succeeds never loads it.
  'src/flow/calls/failure-error.ts',
  'src/policy/provider-errors.ts',
  // The error of a send whose caller stopped waiting (or whose client closed) before it settled: loaded then.
  'src/flow/calls/suspended-error.ts',
  // What follows an attempt that did not simply succeed (a 2xx without a hint header): its class, the server's
  // hint, retry or stop and what the loop does with them (after-answer.ts), the wait for the gate's admission (and
  // the modules only it imports). Loaded once an
  // attempt has answered: in the background after a plain 2xx (the first send has left by then), or awaited by
  // the first attempt that needs it.
  'src/flow/drive/next-step.ts',
  'src/flow/drive/after-answer.ts',
  // The record changes only such an attempt needs (a scheduled retry, the auth refresh: retry-transitions.ts).
  'src/flow/decide/retry-transitions.ts',
  'src/flow/decide/next-step.ts',
  'src/flow/decide/classify.ts',
  'src/policy/retry-after.ts',
  'src/policy/backoff.ts',
  // The host's full outage gate (and its ramp and refused-host probes): the gate stays pristine, with no code of its
  // own, until an attempt does not simply succeed (src/policy/lazy-gate.ts).
  'src/policy/gate.ts',
  'src/policy/ramp.ts',
  'src/policy/refused-probe.ts',
  // The loop's later rounds (later-round.ts, and the modules only it imports): the claim of a stored operation and
  // the wait for another owner (claim-round.ts, flow/decide/claim.ts, flow/engine/lease-expiry.ts: a first send
  // drives the record it wrote ahead, its own), the trimming of a history of 32 attempts (flow/decide/trim-attempts.ts, loaded before the
  // attempt that needs it starts), the full look before an attempt (before-attempt.ts: a plain round's, first-look.ts, stays with
  // the loop), the wait for a retry's time, the `headers` callback and `onUnauthorized` (waits.ts; a client with a
  // `headers` callback loads it as it is created). Loaded in the background after the first answer, or by the
  // first round that needs it.
  'src/flow/drive/later-round.ts',
  'src/flow/drive/claim-round.ts',
  'src/flow/decide/claim.ts',
  'src/flow/engine/lease-expiry.ts',
  'src/flow/decide/trim-attempts.ts',
  'src/flow/drive/before-attempt.ts',
  'src/flow/drive/waits.ts',
  // A stop and its remediation texts (flow/decide/stop.ts): only the modules that stop an operation import it (the
  // next step's chunk, the later rounds', clear()'s), so it loads with the first of them, never before a first send.
  'src/flow/decide/stop.ts',
  // And the record of a stop (settle-stop.ts: the settled record, clear()'s abandon), which travels with it.
  'src/flow/decide/settle-stop.ts',
  // The caller's AbortError (abort-error.ts): loaded when a call is stopped by its own signal.
  'src/flow/calls/abort-error.ts',
  // The check of a 2xx body against the caller's `responseSchema` (schema-check.ts): loaded when a request with a
  // schema is admitted (while its attempt is out) or once its answer is in; a request without one never loads it.
  'src/flow/calls/schema-check.ts',
  // The texts of a refused request check (request-texts.ts): loaded when a request is refused, before anything is
  // stored; the checks themselves stay on the send path (src/flow/request/request-problem.ts).
  'src/flow/request/request-texts.ts',
  // The checks of a request's optional parts (optional-parts.ts: a URL's port against the Fetch standard's blocked
  // ports, its query against credential-like names, the copy of `meta`): loaded by a request that has one, before
  // anything is stored. A page whose API is at its scheme's default port, the request in its body, never loads them.
  'src/flow/request/optional-parts.ts',
  // The browser's memory store (memory-core.ts): where a client that keeps its operations in IndexedDB keeps the
  // records it holds in memory only (a read that sends no key); loaded when the first one is.
  'src/store/memory-core.ts',
  // What the error of an interrupted operation says (interruption-texts.ts: one that escaped its loop, was removed
  // while driven, or was held behind its scope's stuck head): loaded when one is.
  'src/flow/drive/interruption-texts.ts',
  // The record validator (it names each problem of a record that fails the exact check: one damaged or written by
  // another version): the browser's stores load it the first time they meet such a record (src/model/parse.ts).
  'src/model/spec-validator.ts',
  // The browser's storage checks (the wipe marker, persist()): loaded by the first check, at start-up, which the
  // first send never waits for (src/browser/storage-watch.ts).
  'src/browser/persistence.ts',
];

export interface BundleSize {
  entry: string;
  /** The whole entry as one file. */
  minifiedBytes: number;
  gzipBytes: number;
  /** Minified bytes contributed by each package to the whole entry (`src` for oncely's own code). */
  minifiedByPackage: Record<string, number>;
  /** Split: what loads before the app's code runs. */
  startup: ChunkSet;
  /** Split: what loads through `import()`. */
  lazy: ChunkSet;
  /** Split: every chunk a page downloads before its first `send` (the start-up path included). */
  firstSend: ChunkSet;
}

/** The public entries and the source files they are built from. */
export const ENTRIES: Readonly<Record<string, string>> = {
  oncely: 'src/index.ts',
  'oncely/browser': 'src/browser.ts',
  'oncely/service-worker': 'src/service-worker.ts',
};

const common = {
  absWorkingDir: root,
  bundle: true,
  write: false,
  minify: true,
  metafile: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  logLevel: 'silent',
} as const satisfies BuildOptions;

/**
 * `contents` (a module written against the package root, e.g.
 * `export * from './src/tanstack-query.ts'`) bundled as one file: the
 * source files it pulls in and its gzipped size.
 */
export async function bundleModule(contents: string): Promise<{ inputs: string[]; gzipBytes: number }> {
  const result = await build({ ...common, stdin: { contents, resolveDir: root, loader: 'ts' } });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error('esbuild produced nothing');
  return { inputs: Object.keys(result.metafile.inputs), gzipBytes: gzip(output.contents) };
}

/** What esbuild bundles: the entry's file, or a module importing just `imports` from it. */
function input(entry: string, imports: readonly string[] | undefined): Pick<BuildOptions, 'entryPoints' | 'stdin'> {
  const source = ENTRIES[entry];
  if (source === undefined) throw new Error(`unknown entry ${entry}`);
  if (imports === undefined) return { entryPoints: [source] };
  return {
    stdin: {
      contents: `export { ${imports.join(', ')} } from './${source}';`,
      resolveDir: root,
      loader: 'ts' as const,
    },
  };
}

/**
 * Bundles an entry (a key of `ENTRIES`) or, with `imports`, a module that
 * imports just those names from it (what tree-shaking leaves for an app
 * that uses only them).
 */
export async function bundleSize(entry: string, imports?: readonly string[]): Promise<BundleSize> {
  const whole = await build({ ...common, ...input(entry, imports) });
  const output = whole.outputFiles[0];
  if (output === undefined) throw new Error(`esbuild produced nothing for ${entry}`);
  const { startup, lazy, firstSend } = await split(entry, imports);
  return {
    entry: imports === undefined ? entry : `{ ${imports.join(', ')} } from '${entry}'`,
    minifiedBytes: output.contents.length,
    gzipBytes: gzip(output.contents),
    minifiedByPackage: byPackage(Object.values(whole.metafile.outputs)),
    startup,
    lazy,
    firstSend,
  };
}

/** The entry split into chunks: the start-up path (entry + static imports) and the rest. */
async function split(
  entry: string,
  imports: readonly string[] | undefined,
): Promise<{ startup: ChunkSet; lazy: ChunkSet; firstSend: ChunkSet }> {
  const result = await build({ ...common, ...input(entry, imports), splitting: true, outdir: 'split-out' });
  const outputs = result.metafile.outputs;
  const contents = new Map(result.outputFiles.map((f) => [f.path, f.contents]));
  const path = (name: string): string => `${root}${name}`.replaceAll('\\', '/');
  // The entry's own chunk: every chunk loaded with import() has an entryPoint too, and esbuild lists them in no fixed order.
  const entryPoint = imports === undefined ? ENTRIES[entry] : '<stdin>';
  const first = Object.keys(outputs).find((name) => outputs[name]?.entryPoint === entryPoint);
  if (first === undefined) throw new Error(`esbuild split ${entry} without an entry chunk`);
  const later = (name: string): boolean => LOADED_LATER.includes(outputs[name]?.entryPoint ?? '');
  const reached = (followDynamic: boolean): Set<string> => {
    const seen = new Set<string>();
    const pending = [first];
    for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
      if (seen.has(name)) continue;
      seen.add(name);
      for (const i of outputs[name]?.imports ?? []) {
        if (i.kind === 'import-statement') pending.push(i.path);
        else if (i.kind === 'dynamic-import' && followDynamic && !later(i.path)) pending.push(i.path);
      }
    }
    return seen;
  };
  const onStartup = reached(false);
  const beforeSend = reached(true);
  const chunkSet = (names: string[]): ChunkSet => {
    const bytes = names.map((name) => {
      const file = contents.get(path(name)) ?? contents.get(name);
      if (file === undefined) throw new Error(`esbuild output ${name} not found`);
      return file;
    });
    return {
      chunks: names.length,
      minifiedBytes: bytes.reduce((sum, b) => sum + b.length, 0),
      gzipBytes: bytes.reduce((sum, b) => sum + gzip(b), 0),
      minifiedByPackage: byPackage(names.map((name) => outputs[name] as Metafile['outputs'][string])),
      modules: [
        ...new Set(
          names.flatMap((name) =>
            Object.entries(outputs[name]?.inputs ?? {})
              .filter(([, use]) => use.bytesInOutput > 0)
              .map(([file]) => file),
          ),
        ),
      ].sort(),
    };
  };
  const names = Object.keys(outputs).filter((name) => !name.endsWith('.map'));
  return {
    startup: chunkSet(names.filter((name) => onStartup.has(name))),
    lazy: chunkSet(names.filter((name) => !onStartup.has(name))),
    firstSend: chunkSet(names.filter((name) => beforeSend.has(name))),
  };
}

/** Gzip bytes one package adds to an entry: the entry bundled with and without it. */
export async function gzipShareOf(entry: string, pkg: string): Promise<number> {
  const withIt = await build({ ...common, ...input(entry, undefined) });
  const without = await build({ ...common, ...input(entry, undefined), external: [pkg, `${pkg}/*`] });
  const [a, b] = [withIt.outputFiles[0], without.outputFiles[0]];
  if (a === undefined || b === undefined) throw new Error(`esbuild produced nothing for ${entry}`);
  return gzip(a.contents) - gzip(b.contents);
}

function gzip(bytes: Uint8Array): number {
  return gzipSync(bytes, { level: 9 }).length;
}

function byPackage(outputs: Array<Metafile['outputs'][string]>): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const meta of outputs) {
    for (const [file, use] of Object.entries(meta.inputs)) {
      const pkg = file.includes('node_modules/') ? packageOf(file) : 'src';
      sizes[pkg] = (sizes[pkg] ?? 0) + use.bytesInOutput;
    }
  }
  return sizes;
}

function packageOf(file: string): string {
  const rest = file.slice(file.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
  return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? file);
}
