/**
 * docs/options.md's two tables are the code's option names: every option
 * `createClient` accepts has a row in the client table, every policy option
 * one in the policy table, and neither names an option that is not there.
 * The README's shorter table names only options that exist.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_OPTION_KEYS } from '../../src/client-api.js';
import { POLICY_KEYS } from '../../src/policy/policy-schema.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** The option names of the table that starts after `heading` (the first cell of each row, in backticks). */
function tableNames(markdown: string, heading: string): string[] {
  const after = markdown.split(heading)[1] ?? '';
  const table: string[] = [];
  for (const line of after.split('\n').slice(1)) {
    if (line.startsWith('|')) table.push(line);
    else if (table.length > 0) break;
  }
  expect(table.length, `a table after ${heading}`).toBeGreaterThan(2);
  return table
    .slice(2)
    .map((line) => /^\| `(\w+)` \|/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

describe('options tables', () => {
  const doc = read('docs/options.md');

  it('docs/options.md lists every client option, and nothing else', () => {
    expect(tableNames(doc, 'Client options (`createClient(options)`):').sort()).toEqual(
      Object.keys(CLIENT_OPTION_KEYS).sort(),
    );
  });

  it('docs/options.md lists every policy option, and nothing else', () => {
    expect(tableNames(doc, 'Policy options (per endpoint or default').sort()).toEqual([...POLICY_KEYS.policy].sort());
  });

  it("the README's main options exist, and include owner, resultHeaders, connectivity, dispatch", () => {
    const names = tableNames(read('README.md'), '## Options');
    expect(names).toEqual(expect.arrayContaining(['owner', 'resultHeaders', 'connectivity', 'dispatch']));
    for (const name of names) expect(Object.keys(CLIENT_OPTION_KEYS), name).toContain(name);
  });

  it('reads the rows of the table under its heading only', () => {
    const md = '## A\n\n| option | default |\n|---|---|\n| `a` | 1 |\n| `b` | 2 |\n\ntext\n\n| `c` | 3 |\n';
    expect(tableNames(md, '## A')).toEqual(['a', 'b']);
  });
});
