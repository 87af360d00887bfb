/**
 * Compiles the documentation's code blocks against the built package and
 * runs the runnable ones (see extract.ts for the annotation).
 *
 * Each block becomes a module in a work directory inside the repository
 * (so `import … from 'oncely/node'` resolves through the package's own
 * `exports`, to `dist/`, as it does for a user), made of its preamble, the
 * block, and for a block that runs, `await snippetDone({ …its exports })`
 * (the preamble's check that it did what it shows, e.g. the server saw the
 * payment, and its cleanup). One `tsc` run type-checks them all; each
 * runnable block then runs in a child process (tsx), in a scratch
 * directory of its own (a `fileStore({ dir: '.oncely' })` lands there).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Snippet } from './extract.js';

export interface SnippetResult {
  snippet: Snippet;
  /** Where the block was written (inside the work directory). */
  path: string;
  /** `file:line: TSxxxx: message`, the line being the markdown's. */
  typeErrors: string[];
  /** Absent for a block that only type-checks (or did not compile). */
  run?: { ok: boolean; output: string };
}

export interface CheckOptions {
  /** The repository: `node_modules/` and `tsconfig.base.json` are found here. */
  root: string;
  /** Where the blocks are written; must lie inside `root` at the depth of `preamblesDir`, and is removed at the end. */
  workDir: string;
  preamblesDir: string;
  /** Per runnable block. @default 60_000 */
  runTimeoutMs?: number;
}

const SNIPPET_DONE = 'snippetDone';

/** What is written for one block, and where its own lines start (for the line numbers of errors). */
export function moduleText(snippet: Snippet, preamble: string): { text: string; firstLine: number } {
  const head = `${preamble.trimEnd()}\n// ---- ${snippet.file}:${snippet.line}\n`;
  const exported = [...snippet.code.matchAll(/^export (?:const|let|function|async function|class) (\w+)/gm)].map(
    (m) => m[1],
  );
  // Exits once the preamble's check passed: whatever the block left open (a client, a store) must not keep it alive.
  const tail =
    snippet.mode === 'run'
      ? `\nawait ${SNIPPET_DONE}({ ${exported.join(', ')} });\nprocess.exit(0);\n`
      : '\nexport {};\n';
  return { text: `${head}${snippet.code}\n${tail}`, firstLine: head.split('\n').length };
}

function exec(
  command: string,
  args: string[],
  options: { cwd: string; timeout: number },
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({
        code,
        output: `${stdout}${stderr}${error !== null && code === 1 && error.killed ? ' (timed out)' : ''}`,
      });
    });
  });
}

export async function checkSnippets(snippets: readonly Snippet[], options: CheckOptions): Promise<SnippetResult[]> {
  const { root, workDir, preamblesDir } = options;
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  try {
    const written = snippets.map((snippet, i) => {
      if (snippet.mode === 'run' && snippet.preamble === 'none') {
        throw new Error(`${snippet.file}:${snippet.line}: a block that runs needs a preamble (it says what to check)`);
      }
      const preamble =
        snippet.preamble === 'none' ? '' : readFileSync(join(preamblesDir, `${snippet.preamble}.ts`), 'utf8');
      const name = `s${String(i).padStart(3, '0')}-${snippet.file.replace(/[^\w]+/g, '-')}-${snippet.line}.ts`;
      const path = join(workDir, name);
      const { text, firstLine } = moduleText(snippet, preamble);
      writeFileSync(path, text);
      return { snippet, path, name, firstLine };
    });
    writeFileSync(
      join(workDir, 'tsconfig.json'),
      JSON.stringify({
        extends: relative(workDir, join(root, 'tsconfig.base.json')),
        compilerOptions: {
          lib: ['ES2023', 'DOM', 'DOM.Iterable'],
          types: ['node'],
          // A block shows a call; what it binds need not be used afterwards.
          noUnusedLocals: false,
          noUnusedParameters: false,
        },
        include: ['*.ts'],
      }),
    );
    const tsc = await exec(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '-p', workDir, '--pretty', 'false'],
      {
        cwd: root,
        timeout: 240_000,
      },
    );
    const results: SnippetResult[] = written.map(({ snippet, path }) => ({ snippet, path, typeErrors: [] }));
    for (const line of tsc.output.split('\n')) {
      const m = /^(.*?)\((\d+),(\d+)\): error (TS\d+: .*)$/.exec(line.trim());
      if (m === null) continue;
      const at = written.findIndex((w) => (m[1] ?? '').endsWith(w.name));
      const result = results[at];
      const entry = written[at];
      if (result === undefined || entry === undefined) continue;
      const rel = Number(m[2]) - entry.firstLine;
      const where =
        rel >= 0 ? `${entry.snippet.file}:${entry.snippet.line + rel}` : `preamble ${entry.snippet.preamble}`;
      result.typeErrors.push(`${where}: ${m[4]}`);
    }
    if (tsc.code !== 0 && results.every((r) => r.typeErrors.length === 0)) {
      throw new Error(`tsc failed without an error in a block:\n${tsc.output}`);
    }
    const tsx = join(root, 'node_modules/.bin/tsx');
    for (const result of results) {
      if (result.snippet.mode !== 'run' || result.typeErrors.length > 0) continue;
      const scratch = mkdtempSync(join(tmpdir(), 'oncely-snippet-'));
      try {
        const run = await exec(tsx, [result.path], { cwd: scratch, timeout: options.runTimeoutMs ?? 60_000 });
        result.run = { ok: run.code === 0, output: run.output };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    return results;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}
