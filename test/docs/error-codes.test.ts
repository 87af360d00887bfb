/**
 * The lists of error codes, in the README's Errors table and in
 * docs/errors.md, are the code's: every code an OncelyError can carry is
 * listed, and nothing else. A code added without its line fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { OncelyErrorCode } from '../../src/errors.js';

/** Every code: a code added to `OncelyErrorCode` without its line here fails to compile. */
const CODES = {
  invalid_options: true,
  invalid_request: true,
  key_conflict: true,
  operation_failed: true,
  response_invalid: true,
  response_parse: true,
  lease_lost: true,
  not_found: true,
  store_corrupt: true,
  invalid_state: true,
  lock_timeout: true,
  store_owned: true,
  store_unavailable: true,
} satisfies Record<OncelyErrorCode, true>;

/** The codes in the `code` row of a markdown table whose rows read `| field | on | meaning |`. */
function listedCodes(markdown: string): string[] | undefined {
  const row = markdown.split('\n').find((line) => line.startsWith('| `code` | all |'));
  if (row === undefined) return undefined;
  return [...(row.split('|')[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] ?? '');
}

describe.each(['README.md', 'docs/errors.md'])('%s: error codes', (file) => {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

  it('lists exactly the codes an OncelyError can carry', () => {
    const listed = listedCodes(text);
    expect(listed, 'the `code` row of the Errors table').toBeDefined();
    expect([...(listed ?? [])].sort()).toEqual(Object.keys(CODES).sort());
  });
});

describe('listedCodes', () => {
  it('reads the codes of the row, and misses a table without one', () => {
    expect(listedCodes('| field | on | meaning |\n|---|---|---|\n| `code` | all | `a_b`, `c` |\n')).toEqual([
      'a_b',
      'c',
    ]);
    expect(listedCodes('| `state` | all | `x` |')).toBeUndefined();
  });
});
