/**
 * The check of the documentation's code blocks can fail: a block with a type
 * error, one that throws when run, and one that runs but does not do what
 * its preamble checks for are each caught, at their markdown line; a block
 * that does not say how it is checked is refused.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkSnippets } from './snippets/check.js';
import { extractSnippets } from './snippets/extract.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const snippetsDir = join(root, 'test/docs/snippets');

const SAMPLE = [
  '# A sample', // 1
  '',
  '<!-- snippet: types preamble=none -->',
  '```ts',
  "import { createClient } from 'oncely';", // 5
  '',
  "createClient({ baseUrl: 'https://api.example.com' }).send({ method: 'POST', url: '/x', json: 1, retries: 3 });", // 7
  '```',
  '',
  '<!-- snippet: run preamble=node -->', // 10
  '```ts',
  "throw new Error('broken at run time');", // 12
  '```',
  '',
  '<!-- snippet: run preamble=node -->', // 15
  '```ts',
  "import { createClient } from 'oncely';",
  "createClient({ baseUrl: 'https://api.example.com' }); // sends nothing: the preamble's check fails",
  '```',
  '', // 20
  '<!-- snippet: run preamble=node -->',
  '```ts',
  "import { createClient } from 'oncely';",
  "await createClient({ baseUrl: 'https://api.example.com' }).send({ method: 'POST', url: '/x', json: { a: 1 } });",
  '```', // 25
].join('\n');

describe('extractSnippets', () => {
  it('reads each block with its mode, preamble and first line', () => {
    const { snippets, problems } = extractSnippets(SAMPLE, 'sample.md');
    expect(problems).toEqual([]);
    expect(snippets.map((s) => [s.line, s.mode, s.preamble])).toEqual([
      [5, 'types', 'none'],
      [12, 'run', 'node'],
      [17, 'run', 'node'],
      [23, 'run', 'node'],
    ]);
  });

  it('refuses a ts block that does not say how it is checked, and an annotation on another language', () => {
    const { problems, json } = extractSnippets(
      '```ts\nconst a = 1;\n```\n\n<!-- snippet: run -->\n```sh\nls\n```\n\n```json\n{"a": 1}\n```\n',
      'x.md',
    );
    expect(problems).toEqual([
      'x.md:1: a ts block without "<!-- snippet: run|types preamble=<name> -->" on the line before',
      'x.md:6: a snippet annotation before a `sh` block (only ts blocks are compiled)',
    ]);
    expect(json).toEqual([{ file: 'x.md', line: 11, code: '{"a": 1}' }]);
  });
});

describe('checkSnippets on a deliberately broken sample', () => {
  it('catches the type error at its line, the throw, the block that does nothing, and passes the good one', async () => {
    const { snippets } = extractSnippets(SAMPLE, 'sample.md');
    const results = await checkSnippets(snippets, {
      root,
      workDir: mkdtempSync(join(snippetsDir, '.work-')),
      preamblesDir: join(snippetsDir, 'preambles'),
    });
    const [typeError, throws, doesNothing, good] = results;
    expect(typeError?.typeErrors).toHaveLength(1);
    expect(typeError?.typeErrors[0]).toMatch(/^sample\.md:7: TS\d+: .*retries/);
    expect(throws?.typeErrors).toEqual([]);
    expect(throws?.run?.ok).toBe(false);
    expect(throws?.run?.output).toContain('broken at run time');
    expect(doesNothing?.run?.ok).toBe(false);
    expect(doesNothing?.run?.output).toContain('the server saw an operation');
    expect(good?.typeErrors).toEqual([]);
    expect(good?.run).toMatchObject({ ok: true });
  }, 180_000);
});
