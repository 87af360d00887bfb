/**
 * The table of `postgresIdempotencyStore`: one row per (tenant, scope, key),
 * versioned migrations applied once under a transaction-scoped advisory lock
 * (a fleet starting at once migrates once), as the operations store does.
 * Leases and retention are `timestamptz` set and judged by the database's
 * `now()`: no server's clock decides when a lease is over.
 */
import type { Pool } from 'pg';

export interface IdempotencyTableNames {
  schema: string;
  table: string;
  migrations: string;
  base: string;
}

export interface IdempotencyMigration {
  version: number;
  description: string;
  sql: (n: IdempotencyTableNames) => string;
}

export const IDEMPOTENCY_MIGRATIONS: readonly IdempotencyMigration[] = [
  {
    version: 1,
    description: 'idempotency records: claim, lease and fencing epoch, stored response, retention',
    sql: (n) => `
      CREATE TABLE ${n.table} (
        tenant text NOT NULL DEFAULT '',
        scope text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        epoch bigint NOT NULL DEFAULT 1,
        -- Claimed by a transactional run: no outcome proves no effect, so it may run again.
        atomic boolean NOT NULL DEFAULT false,
        -- onAbandoned has been called for this epoch's abandoned claim.
        reported boolean NOT NULL DEFAULT false,
        lease_until timestamptz NOT NULL,
        retain_until timestamptz NOT NULL,
        status integer,
        headers jsonb,
        body bytea,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        PRIMARY KEY (tenant, scope, key)
      );
      CREATE INDEX "${n.base}_retain" ON ${n.table} (tenant, retain_until);
    `,
  },
];

export const IDEMPOTENCY_SCHEMA_VERSION = Math.max(...IDEMPOTENCY_MIGRATIONS.map((m) => m.version));

export async function migrateIdempotency(pool: Pool, names: IdempotencyTableNames): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${names.table}`]);
    if (names.schema !== '"public"') await client.query(`CREATE SCHEMA IF NOT EXISTS ${names.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${names.migrations} (
         version integer PRIMARY KEY,
         description text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${names.migrations}`);
    const applied = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...applied);
    if (newest > IDEMPOTENCY_SCHEMA_VERSION) {
      throw new Error(
        `${names.table} is at schema version ${newest}, newer than this oncely knows (${IDEMPOTENCY_SCHEMA_VERSION}): upgrade oncely`,
      );
    }
    const done: number[] = [];
    for (const migration of IDEMPOTENCY_MIGRATIONS) {
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
