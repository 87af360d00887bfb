/**
 * `oncely/postgres` without `pg` installed (issue 32, item 7): importing it
 * works, and a store that must make its own pool says what to install,
 * instead of Node's bare "Cannot find package 'pg'" at import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadPg } from '../../src/store/postgres/load-pg.js';

const missing = (id: string): never => {
  throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
};

describe('loading pg', () => {
  it('a missing pg is an error that says npm install pg (and @types/pg)', () => {
    expect(() => loadPg(missing)).toThrow(/npm install pg.*@types\/pg/);
  });

  it('any other failure of pg is passed on as it is', () => {
    const broken = (): never => {
      throw new SyntaxError('broken pg');
    };
    expect(() => loadPg(broken)).toThrow(SyntaxError);
  });

  it('an installed pg is loaded, with its Pool', () => {
    expect(typeof loadPg().Pool).toBe('function');
  });

  it('no module of oncely/postgres imports pg statically, so importing the entry never fails for it', () => {
    const dir = fileURLToPath(new URL('../../src/', import.meta.url));
    const files = ['postgres.ts', ...readdirSync(join(dir, 'store/postgres')).map((f) => `store/postgres/${f}`)];
    files.push(...readdirSync(join(dir, 'server/postgres')).map((f) => `server/postgres/${f}`));
    const valueImports = files.filter((file) =>
      /^import (?!type )[^;]*from 'pg';/m.test(readFileSync(join(dir, file), 'utf8')),
    );
    expect(valueImports).toEqual([]);
  });
});
