/**
 * Every code block of README.md and docs/*.md is compiled against the built
 * package, and the runnable ones run against a local reference server and
 * real files (see snippets/extract.ts for how a block says which): a block
 * that drifted from the API fails here, naming its file and line.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkSnippets, type SnippetResult } from './snippets/check.js';
import { extractSnippets } from './snippets/extract.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const snippetsDir = join(root, 'test/docs/snippets');
const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const extracted = files.map((file) => extractSnippets(readFileSync(join(root, file), 'utf8'), file));
const snippets = extracted.flatMap((e) => e.snippets);
const name = (r: { file: string; line: number; mode: string }) => `${r.file}:${r.line} (${r.mode})`;

describe('documentation code blocks', () => {
  let results: SnippetResult[] = [];

  beforeAll(async () => {
    expect(existsSync(join(root, 'dist/index.d.ts')), 'the blocks import the built package: npm run build').toBe(true);
    results = await checkSnippets(snippets, {
      root,
      workDir: mkdtempSync(join(snippetsDir, '.work-')),
      preamblesDir: join(snippetsDir, 'preambles'),
    });
  }, 600_000);

  it('every ts block says how it is checked, every json block parses', () => {
    expect(extracted.flatMap((e) => e.problems)).toEqual([]);
    for (const block of extracted.flatMap((e) => e.json)) {
      expect(() => JSON.parse(block.code), `${block.file}:${block.line}`).not.toThrow();
    }
    // The README and most docs show code: a reader that found no block would check nothing.
    expect(snippets.length).toBeGreaterThanOrEqual(15);
    expect(snippets.filter((s) => s.mode === 'run').length).toBeGreaterThanOrEqual(5);
  });

  it.each(snippets.map((s) => [name(s), s] as const))('%s compiles, and runs when it says so', (_, snippet) => {
    const result = results.find((r) => r.snippet === snippet);
    expect(result, 'checked').toBeDefined();
    expect(result?.typeErrors).toEqual([]);
    // On failure the diff shows the run's output.
    if (snippet.mode === 'run') expect(result?.run ?? { ok: false, output: 'not run' }).toMatchObject({ ok: true });
  });
});
