/**
 * docs/architecture.md ("Layers, and every module") lists every module of `src/`, one line each
 * (a line naming a directory, `store/file/`, covers the files in it), and
 * names nothing that does not exist: the map a reader gets is the code.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const MODULES_HEADING = 'Layers, and every module';

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path).replaceAll('\\', '/')] : [];
  });
}

/** The module names listed in the tree under `heading` (first word of each line, after the tree drawing). */
function listedModules(doc: string, heading = MODULES_HEADING): string[] {
  const section = doc.split(new RegExp(`^## ${heading}$`, 'm'))[1]?.split(/^## /m)[0];
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

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const listed = listedModules(doc);

  it('is linked from the README', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('](docs/architecture.md)');
  });

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
      listedModules(
        '## Modules\n\n```\nsrc/\n├── client.ts     composition\n│   └── flow/  the loop\n```\n',
        'Modules',
      ),
    ).toEqual(['client.ts', 'flow/']);
  });
});
