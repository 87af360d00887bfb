/**
 * The schema of the PostgreSQL store, as numbered migrations applied in
 * order, once, under a transaction-scoped advisory lock: a fleet of workers
 * starting at the same moment migrates once, the others wait and find the
 * work done. Applied versions are rows of `<table>_migrations`.
 *
 * Times the engine decides (next attempt, deadline, lease end, retention)
 * are stored as it wrote them, epoch milliseconds (`double precision`:
 * exact for integers, and a fake test clock may use fractions);
 * `created_at`/`updated_at` come from the database clock.
 */
import type { Pool } from 'pg';
import { applyMigrations, type NumberedMigration } from './migrate.js';
import type { TableNames } from './options.js';

export type Migration = NumberedMigration<TableNames>;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'operations, quarantine, due and scope indexes, wake-up trigger',
    sql: (n) => `
      CREATE TABLE ${n.table} (
        tenant text NOT NULL DEFAULT '',
        key text NOT NULL,
        seq bigserial NOT NULL,
        fingerprint text NOT NULL,
        state text NOT NULL,
        scope text,
        write_order double precision NOT NULL,
        next_attempt_at double precision NOT NULL,
        deadline_at double precision NOT NULL,
        retain_until double precision,
        lease_owner text,
        lease_epoch bigint NOT NULL DEFAULT 0,
        lease_expires_at double precision,
        rev bigint NOT NULL DEFAULT 1,
        record jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant, key)
      );
      -- What a drain looks for: open, unleased, due first.
      CREATE INDEX "${n.base}_due" ON ${n.table} (tenant, next_attempt_at, seq)
        WHERE state IN ('pending', 'in_flight') AND lease_owner IS NULL;
      -- Every open record (resume() also takes over expired leases), in list order.
      CREATE INDEX "${n.base}_open" ON ${n.table} (tenant, next_attempt_at, write_order)
        WHERE state IN ('pending', 'in_flight');
      -- The head of each scope.
      CREATE INDEX "${n.base}_scope" ON ${n.table} (tenant, scope, seq)
        WHERE scope IS NOT NULL AND state IN ('pending', 'in_flight');
      -- sweep(): finished records by retention.
      CREATE INDEX "${n.base}_finished" ON ${n.table} (tenant, retain_until)
        WHERE state NOT IN ('pending', 'in_flight');
      CREATE TABLE ${n.quarantine} (
        tenant text NOT NULL DEFAULT '',
        id text NOT NULL,
        problems jsonb NOT NULL,
        at double precision NOT NULL,
        raw text NOT NULL,
        moved_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant, id)
      );
      -- Wake-ups: work became available to any worker (enqueued unleased, or a lease released).
      CREATE FUNCTION ${n.schema}."${n.base}_wake"() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_notify('${n.channel}', NEW.tenant);
        RETURN NULL;
      END
      $fn$;
      CREATE TRIGGER "${n.base}_wake" AFTER INSERT OR UPDATE OF lease_owner, state ON ${n.table}
        FOR EACH ROW WHEN (NEW.lease_owner IS NULL AND NEW.state IN ('pending', 'in_flight'))
        EXECUTE FUNCTION ${n.schema}."${n.base}_wake"();
    `,
  },
  {
    version: 2,
    description: 'lease ends on the database clock, scope heads by write order',
    sql: (n) => `
      -- When the lease ends, in epoch ms of the database's clock (written as now() + what the holder had left):
      -- claims judge expiry with now(), never with a worker's clock. (lease_expires_at stays the document's
      -- lease.until, on its holder's clock.) Rows leased before this migration: their holders' clocks are
      -- taken at their word once.
      ALTER TABLE ${n.table} ADD COLUMN lease_ends_db double precision;
      UPDATE ${n.table} SET lease_ends_db = lease_expires_at WHERE lease_owner IS NOT NULL;
      -- The claim's scope-head test: is there an open record of this scope written before this one?
      CREATE INDEX "${n.base}_scope_head" ON ${n.table} (tenant, scope, write_order, seq)
        WHERE scope IS NOT NULL AND state IN ('pending', 'in_flight');
    `,
  },
  {
    version: 3,
    description: 'open records in claim order',
    sql: (n) => `
      -- The claim's order exactly (due, write order, insertion order): a claim reads its rows off the index
      -- in order and stops at its limit, whatever the backlog and whatever the statistics say. The index it
      -- replaces lacked seq, so a claim could read and sort every due row first (300 rows, half a megabyte,
      -- before statistics were gathered). Its prefix serves every query the old one did.
      CREATE INDEX "${n.base}_claim_order" ON ${n.table} (tenant, next_attempt_at, write_order, seq)
        WHERE state IN ('pending', 'in_flight');
      DROP INDEX ${n.schema}."${n.base}_open";
    `,
  },
  {
    version: 4,
    description: 'records compressed with lz4 where the server has it',
    sql: (n) => `
      -- A document over about 2 KB (a stored policy and response make most of them) is kept compressed, and
      -- every claim and write decompresses and compresses it: lz4 does both several times faster than the
      -- default pglz, for the database's CPU per operation. Only values written from now on; a server built
      -- without lz4 (or older than PostgreSQL 14) keeps pglz.
      DO $m$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
          ALTER TABLE ${n.table} ALTER COLUMN record SET COMPRESSION lz4;
        END IF;
      END $m$;
    `,
  },
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * Applies the migrations not applied yet; resolves with the versions it
 * applied (empty when the schema was current). Refuses a database migrated
 * by a newer version of this code.
 */
export function migrate(pool: Pool, names: TableNames): Promise<number[]> {
  return applyMigrations(pool, names, MIGRATIONS);
}
