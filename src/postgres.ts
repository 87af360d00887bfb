/**
 * oncely/postgres — the PostgreSQL operation store, for fleets: many Node
 * processes on many hosts share one queue of operations, each sent by
 * exactly one of them at a time, resumed by any of them after a crash.
 * Needs the `pg` package (an optional peer dependency).
 *
 * @example
 * import { createClient } from 'oncely/node';
 * import { postgresStore } from 'oncely/postgres';
 * const client = createClient({ store: postgresStore({ connectionString: process.env.DATABASE_URL }) });
 *
 * It also holds the server half's PostgreSQL store (`postgresIdempotencyStore`,
 * for `idempotency()` of `oncely/server`): kept here so `oncely/server`
 * never imports `pg` and runs in workers, Deno and Bun.
 */

export type { PostgresIdempotencyStoreOptions } from './server/postgres/options.js';
export {
  IDEMPOTENCY_MIGRATIONS,
  IDEMPOTENCY_SCHEMA_VERSION,
  type IdempotencyMigration,
} from './server/postgres/schema.js';
export { type PostgresIdempotencyStore, postgresIdempotencyStore } from './server/postgres/store.js';
export type { Migration } from './store/postgres/migrations.js';
export { MIGRATIONS, SCHEMA_VERSION } from './store/postgres/migrations.js';
export type { PostgresStore, PostgresStoreOptions } from './store/postgres/store.js';
export { postgresStore } from './store/postgres/store.js';
