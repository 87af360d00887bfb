/**
 * The public options of the PostgreSQL store, their validation, and the
 * quoted names of its tables.
 */
import type { Pool } from 'pg';
import { InvalidOptionsError } from '../../errors.js';

export interface PostgresStoreOptions {
  /**
   * A `pg.Pool` the store borrows connections from (and never ends). Give
   * either `pool` or `connectionString`.
   * @example postgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 }) })
   */
  pool?: Pool;
  /**
   * A connection string; the store then owns a pool of `poolSize`
   * connections and ends it on `close()`.
   * @example postgresStore({ connectionString: 'postgres://app@db.internal:5432/payments' })
   */
  connectionString?: string;
  /**
   * Connections of the store's own pool (with `connectionString` only). A
   * worker holds these plus one more, outside the pool, while anyone
   * listens with `onWake`.
   * @default 10
   * @example postgresStore({ connectionString, poolSize: 4 })
   */
  poolSize?: number;
  /**
   * How long a query waits for a connection (of the store's own pool) or
   * the wake-up listener for its own, before failing: a database that does
   * not answer, or a pool whose connections are all held, is an error the
   * engine reports and retries, never a hang. (A `pool` you give keeps its
   * own `connectionTimeoutMillis`.)
   * @default 10000
   * @example postgresStore({ connectionString, connectionTimeoutMs: 2_000 })
   */
  connectionTimeoutMs?: number;
  /**
   * The operations table. Lower-case letters, digits and `_`, at most 40
   * characters; the quarantine and migrations tables are named after it.
   * @default 'oncely_operations'
   */
  table?: string;
  /** The schema of the tables; created by the migrations when missing. @default 'public' */
  schema?: string;
  /**
   * Several applications (or environments) can share one table: each sees
   * only the rows of its own tenant. Keys are unique per tenant.
   * @default ''
   * @example postgresStore({ connectionString, tenant: 'eu-payments' })
   */
  tenant?: string;
  /**
   * Run the migrations on first use (under an advisory lock, so a fleet
   * starting at once migrates once). Set `false` when a deploy step runs
   * `store.migrate()` (or `oncely migrate`) and the application role may not
   * change the schema.
   * @default true
   */
  migrate?: boolean;
  /**
   * The clock the client writing through this store reads (its runtime's
   * `now`): quarantine timestamps, and what a lease written with a record
   * has left (`lease.until - now()`), which the database adds to its own
   * clock. Leases are judged on the database's clock only, so this clock
   * may be off by minutes; it must be the one the client's leases are
   * written on.
   * @default Date.now
   * @example postgresStore({ connectionString, now: runtime.now })
   */
  now?: () => number;
  /**
   * Send the statements every operation runs (read, write, claim) as named
   * prepared statements: each connection parses and plans them once, which
   * saves the database most of its work per claim. Set `false` behind a
   * connection pooler that cannot keep a session's prepared statements
   * (PgBouncer in transaction mode before 1.21, or without
   * `max_prepared_statements`).
   * @default true
   * @example postgresStore({ connectionString, preparedStatements: false })
   */
  preparedStatements?: boolean;
}

export interface ResolvedOptions {
  tenant: string;
  connectionTimeoutMs: number;
  migrate: boolean;
  now: () => number;
  preparedStatements: boolean;
  names: TableNames;
}

/** Quoted, schema-qualified names (identifiers are checked, then quoted anyway). */
export interface TableNames {
  schema: string;
  table: string;
  quarantine: string;
  migrations: string;
  /** Unquoted base name, for index and function names. */
  base: string;
  /** The LISTEN/NOTIFY channel of this table (payload: the tenant; another schema's table of the same name only adds spurious wake-ups). */
  channel: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/;

export function validateOptions(options: PostgresStoreOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  const hasPool = options.pool !== undefined;
  const hasUrl = options.connectionString !== undefined;
  if (hasPool === hasUrl) throw new InvalidOptionsError('pool', 'give exactly one of `pool` or `connectionString`');
  if (hasPool && typeof options.pool?.connect !== 'function') {
    throw new InvalidOptionsError('pool', 'must be a pg.Pool (an object with connect() and query())');
  }
  if (hasUrl && (typeof options.connectionString !== 'string' || options.connectionString === '')) {
    throw new InvalidOptionsError('connectionString', 'must be a non-empty string');
  }
  if (options.poolSize !== undefined) {
    if (!hasUrl) throw new InvalidOptionsError('poolSize', 'only applies with `connectionString`');
    if (!Number.isInteger(options.poolSize) || options.poolSize < 1) {
      throw new InvalidOptionsError('poolSize', 'must be an integer ≥ 1');
    }
  }
  const timeout = options.connectionTimeoutMs;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1)) {
    throw new InvalidOptionsError('connectionTimeoutMs', 'must be an integer ≥ 1 (ms)');
  }
  const table = options.table ?? 'oncely_operations';
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw new InvalidOptionsError('table', 'must be lower-case letters, digits and _, at most 40 characters');
  }
  const schema = options.schema ?? 'public';
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new InvalidOptionsError('schema', 'must be lower-case letters, digits and _, at most 40 characters');
  }
  const tenant = options.tenant ?? '';
  if (typeof tenant !== 'string' || tenant.length > 200) {
    throw new InvalidOptionsError('tenant', 'must be a string of at most 200 characters');
  }
  if (options.migrate !== undefined && typeof options.migrate !== 'boolean') {
    throw new InvalidOptionsError('migrate', 'must be a boolean');
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new InvalidOptionsError('now', 'must be a function');
  }
  if (options.preparedStatements !== undefined && typeof options.preparedStatements !== 'boolean') {
    throw new InvalidOptionsError('preparedStatements', 'must be a boolean');
  }
  return {
    tenant,
    connectionTimeoutMs: timeout ?? 10_000,
    migrate: options.migrate ?? true,
    now: options.now ?? Date.now,
    preparedStatements: options.preparedStatements ?? true,
    names: {
      schema: `"${schema}"`,
      table: `"${schema}"."${table}"`,
      quarantine: `"${schema}"."${table}_quarantine"`,
      migrations: `"${schema}"."${table}_migrations"`,
      base: table,
      channel: `${table}_wake`,
    },
  };
}
