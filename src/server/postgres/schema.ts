/**
 * The table of `postgresIdempotencyStore`: one row per (tenant, scope, key),
 * versioned migrations applied once under transaction-scoped advisory locks
 * (a fleet starting at once migrates once) by the runner the operations
 * store uses.
 * Leases and retention are `timestamptz` set and judged by the database's
 * `now()`: no server's clock decides when a lease is over.
 */
import type { Pool } from 'pg';
import { applyMigrations, type NumberedMigration } from '../../store/postgres/migrate.js';

export interface IdempotencyTableNames {
  schema: string;
  table: string;
  migrations: string;
  base: string;
}

export type IdempotencyMigration = NumberedMigration<IdempotencyTableNames>;

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

/** Applies the idempotency table's migrations not applied yet (see `applyMigrations`). */
export function migrateIdempotency(pool: Pool, names: IdempotencyTableNames): Promise<number[]> {
  return applyMigrations(pool, names, IDEMPOTENCY_MIGRATIONS);
}
