/**
 * The `pg` package, loaded when a store first needs to make its own pool,
 * not when `oncely/postgres` is imported. `pg` is an optional peer: a static
 * import made a missing one fail at import with Node's bare "Cannot find
 * package 'pg'", naming neither what needs it nor what to install. A
 * caller that passes its own `pool` never loads it here.
 */
import { createRequire } from 'node:module';
import type * as Pg from 'pg';

/** `require` as this module sees it; a test passes one that fails. */
type Require = (id: string) => unknown;

export function loadPg(require: Require = createRequire(import.meta.url)): typeof Pg {
  try {
    const loaded = require('pg') as typeof Pg & { default?: typeof Pg };
    return loaded.default ?? loaded;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      "oncely/postgres needs the 'pg' package, an optional peer dependency that is not installed: run `npm install pg` (and `npm install -D @types/pg` for TypeScript), or pass your own `pool`.",
      { cause: error },
    );
  }
}
