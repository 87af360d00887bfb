/**
 * The README's list of error codes is the code's: every code an OncelyError
 * can carry (each has a default remediation, keyed by code) is listed, and
 * nothing else. A code added without its line fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REMEDIATION } from '../../src/errors.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README: error codes', () => {
  it('lists exactly the codes an OncelyError can carry', () => {
    const row = README.split('\n').find((line) => line.startsWith('| `code` | all |'));
    expect(row, 'the `code` row of the Errors table').toBeDefined();
    const listed = [...(row ?? '').split('|')[3]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect([...listed].sort()).toEqual(Object.keys(DEFAULT_REMEDIATION).sort());
  });
});
