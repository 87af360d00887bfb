/**
 * The one migration runner of oncely's PostgreSQL tables (the fleet's
 * operations table and the server half's idempotency table): numbered
 * migrations applied in order, once, in one transaction under
 * transaction-scoped advisory locks, so a fleet starting at the same moment
 * migrates once and the others wait and find the work done. Applied
 * versions are rows of the table's own migrations table.
 */
import type { Pool, PoolClient } from 'pg';

/** Quoted names a migration runs against (each kind of table adds its own). */
export interface MigratedNames {
  /** The quoted schema, e.g. `"public"`. */
  schema: string;
  /** The quoted, schema-qualified table. */
  table: string;
  /** The quoted, schema-qualified table of applied versions. */
  migrations: string;
}

export interface NumberedMigration<N extends MigratedNames> {
  version: number;
  description: string;
  sql: (names: N) => string;
}

/**
 * Applies the migrations not applied yet; resolves with the versions it
 * applied (empty when the schema was current). Refuses a table migrated by a
 * newer version of this code, naming both versions.
 */
export async function applyMigrations<N extends MigratedNames>(
  pool: Pool,
  names: N,
  migrations: readonly NumberedMigration<N>[],
): Promise<number[]> {
  const known = Math.max(...migrations.map((m) => m.version));
  const client: PoolClient = await pool.connect();
  try {
    await client.query('BEGIN');
    // One lock per schema, then one per table, held until COMMIT: concurrent migrators queue here. The
    // schema's comes first because two tables migrated at once in one fresh schema (of either kind) would
    // both run CREATE SCHEMA IF NOT EXISTS, and one would fail on pg_namespace's unique index.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely-schema:${names.schema}`]);
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${names.table}`]);
    // (Not for `public`: it exists, and a role without CREATE on the database could not run this.)
    if (names.schema !== `"public"`) await client.query(`CREATE SCHEMA IF NOT EXISTS ${names.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${names.migrations} (
         version integer PRIMARY KEY,
         description text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${names.migrations}`);
    const applied = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new Error(
        `${names.table} is at schema version ${newest}, newer than this oncely knows (${known}): upgrade oncely`,
      );
    }
    const done: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(names));
      await client.query(`INSERT INTO ${names.migrations} (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
      done.push(migration.version);
    }
    await client.query('COMMIT');
    return done;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
