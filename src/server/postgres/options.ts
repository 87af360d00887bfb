/**
 * Options of the PostgreSQL idempotency store, checked with zod at
 * construction (a refusal names the field).
 */
import type { Pool } from 'pg';
import * as z from 'zod';
import { parseOptions } from '../validate.js';
import type { IdempotencyTableNames } from './schema.js';

export interface PostgresIdempotencyStoreOptions {
  /**
   * The `pg.Pool` the store borrows connections from (and never ends);
   * `withIdempotency` hands the handler one of them inside `BEGIN`.
   * @example postgresIdempotencyStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) })
   */
  pool: Pool;
  /**
   * Lower-case letters, digits and `_`, at most 40 characters.
   * @default 'oncely_idempotency'
   */
  table?: string;
  /** @default 'public' */
  schema?: string;
  /**
   * Several applications can share one table, each seeing only its own rows.
   * @default ''
   * @example postgresIdempotencyStore({ pool, tenant: 'eu-payments' })
   */
  tenant?: string;
  /**
   * Run the migrations on first use (under an advisory lock). `false` when a
   * deploy step calls `store.migrate()` and the application role may not
   * change the schema.
   * @default true
   */
  migrate?: boolean;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/;
const identifier = z.string().regex(IDENTIFIER, 'must be lower-case letters, digits and _, at most 40 characters');

const schema = z.strictObject({
  pool: z.custom<Pool>(
    (v) => typeof v === 'object' && v !== null && typeof (v as { connect?: unknown }).connect === 'function',
    'must be a pg.Pool (an object with connect() and query())',
  ),
  table: z.optional(identifier),
  schema: z.optional(identifier),
  tenant: z.optional(z.string().max(200)),
  migrate: z.optional(z.boolean()),
});

export function validatePgOptions(options: PostgresIdempotencyStoreOptions): {
  pool: Pool;
  tenant: string;
  migrate: boolean;
  names: IdempotencyTableNames;
} {
  const parsed = parseOptions(schema, options, 'postgresIdempotencyStore');
  const table = parsed.table ?? 'oncely_idempotency';
  const schemaName = parsed.schema ?? 'public';
  return {
    pool: parsed.pool,
    tenant: parsed.tenant ?? '',
    migrate: parsed.migrate ?? true,
    names: {
      schema: `"${schemaName}"`,
      table: `"${schemaName}"."${table}"`,
      migrations: `"${schemaName}"."${table}_migrations"`,
      base: table,
    },
  };
}
