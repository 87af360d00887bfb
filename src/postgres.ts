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
 */
export type { Migration } from './store/postgres/migrations.js';
export { MIGRATIONS, SCHEMA_VERSION } from './store/postgres/migrations.js';
export type { PostgresStore, PostgresStoreOptions } from './store/postgres/store.js';
export { postgresStore } from './store/postgres/store.js';
