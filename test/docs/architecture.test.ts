/**
 * README's "Architecture" section lists every module of `src/`, one line each
 * (a line naming a directory, `store/file/`, covers the files in it), and
 * names nothing that does not exist: the map a reader gets is the code.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path).replaceAll('\\', '/')] : [];
  });
}

/** The module names listed in the README's Architecture tree (first word of each line, after the tree drawing). */
function listedModules(readme: string): string[] {
  const section = readme.split(/^## Architecture$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) return [];
  const tree = section.split('```')[1] ?? '';
  return tree
    .split('\n')
    .map((line) => /^[\s│├└─]*([\w./-]+\.ts|[\w./-]+\/)\s/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

/** Modules not covered by any listed name, and listed names that exist nowhere. */
function compare(listed: string[], actual: string[]): { unlisted: string[]; missing: string[] } {
  const covers = (name: string, file: string) => (name.endsWith('/') ? file.startsWith(name) : file === name);
  return {
    unlisted: actual.filter((file) => !listed.some((name) => covers(name, file))),
    missing: listed.filter((name) => !actual.some((file) => covers(name, file))),
  };
}

describe('README architecture', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const listed = listedModules(readme);

  it('lists every module of src/ and nothing that is not there', () => {
    expect(listed.length).toBeGreaterThan(30);
    for (const name of listed) expect(existsSync(join(SRC, name)), name).toBe(true);
    expect(statSync(SRC).isDirectory()).toBe(true);
    expect(compare(listed, modules(SRC))).toEqual({ unlisted: [], missing: [] });
  });

  it('catches a module the tree forgot and one it invents', () => {
    expect(compare(['client.ts', 'store/file/'], ['client.ts', 'store/file/io.ts', 'flow/drive/run.ts'])).toEqual({
      unlisted: ['flow/drive/run.ts'],
      missing: [],
    });
    expect(compare(['client.ts', 'gone.ts'], ['client.ts'])).toEqual({ unlisted: [], missing: ['gone.ts'] });
    expect(
      listedModules('## Architecture\n\n```\nsrc/\n├── client.ts     composition\n│   └── flow/  the loop\n```\n'),
    ).toEqual(['client.ts', 'flow/']);
  });
});
