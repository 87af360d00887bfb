/**
 * The PostgreSQL idempotency store, for a fleet of servers behind one
 * database: the claim is one `INSERT … ON CONFLICT` statement, every later
 * write is fenced by the claim's epoch, leases end by the database's
 * `now()`, and `transaction()` commits the handler's own SQL with the stored
 * response, or neither.
 */
import type { Pool, PoolClient } from 'pg';
import {
  type Claim,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  LeaseTakenOverError,
  type StoredResponse,
  type TransactionOutcome,
} from '../store.js';
import { type PostgresIdempotencyStoreOptions, validatePgOptions } from './options.js';
import { type IdempotencyTableNames, migrateIdempotency } from './schema.js';
import { abandonSql, type ClaimRow, claimSql, completeSql, releaseSql, renewSql, reportSql, sweepSql } from './sql.js';

export interface PostgresIdempotencyStore extends IdempotencyStore<PoolClient> {
  /** Applies the migrations now (otherwise on first use, when `migrate` is on). */
  migrate(): Promise<number[]>;
  /** The quoted, schema-qualified table name (for reports and tests). */
  readonly table: string;
}

/**
 * A claim whose row cannot be read in the claim statement's snapshot (it was
 * committed by another request after the statement began) is claimed again
 * with a fresh statement; a few rounds settle any race.
 */
const CLAIM_ROUNDS = 5;

class PgIdempotencyStore implements PostgresIdempotencyStore {
  readonly #pool: Pool;
  readonly #tenant: string;
  readonly #names: IdempotencyTableNames;
  readonly #sql: {
    claim: string;
    report: string;
    complete: string;
    renew: string;
    release: string;
    abandon: string;
    sweep: string;
  };
  #ready: Promise<unknown> | undefined;

  constructor(options: PostgresIdempotencyStoreOptions) {
    const resolved = validatePgOptions(options);
    this.#pool = resolved.pool;
    this.#tenant = resolved.tenant;
    this.#names = resolved.names;
    const n = resolved.names;
    this.#sql = {
      claim: claimSql(n),
      report: reportSql(n),
      complete: completeSql(n),
      renew: renewSql(n),
      release: releaseSql(n),
      abandon: abandonSql(n),
      sweep: sweepSql(n),
    };
    if (!resolved.migrate) this.#ready = Promise.resolve();
  }

  get table(): string {
    return this.#names.table;
  }

  migrate(): Promise<number[]> {
    const run = migrateIdempotency(this.#pool, this.#names);
    this.#ready = run;
    return run;
  }

  #whenReady(): Promise<unknown> {
    if (this.#ready === undefined) {
      this.#ready = migrateIdempotency(this.#pool, this.#names).catch((error: unknown) => {
        this.#ready = undefined; // the next request tries again
        throw error;
      });
    }
    return this.#ready;
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    await this.#whenReady();
    const params = [
      this.#tenant,
      request.scope,
      request.key,
      request.fingerprint,
      request.leaseMs,
      request.retentionMs,
      request.atomic,
      request.rerunAbandoned,
    ];
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const { rows } = await this.#pool.query<ClaimRow>(this.#sql.claim, params);
      const row = rows[0];
      if (row === undefined) continue;
      const epoch = Number(row.epoch);
      if (row.claimed) return { kind: 'claimed', epoch, rerun: row.rerun };
      if (row.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
      if (row.status !== null) {
        const response: StoredResponse = {
          status: row.status,
          headers: row.headers ?? [],
          body: new Uint8Array(row.body ?? []),
        };
        return { kind: 'completed', response };
      }
      const leaseMs = row.lease_ms ?? 0;
      if (leaseMs > 0) return { kind: 'in_progress', leaseRemainingMs: leaseMs };
      if (row.reported) return { kind: 'abandoned', epoch, firstReport: false };
      // Abandoned as of the statement's snapshot: mark it reported with a statement that sees
      // the newest row (an outcome committed meanwhile makes it fail, and the next round replays).
      const marked = await this.#pool.query(this.#sql.report, [this.#tenant, request.scope, request.key, epoch]);
      if (marked.rowCount === 1) return { kind: 'abandoned', epoch, firstReport: true };
    }
    throw new Error(`claim of key ${JSON.stringify(request.key)} did not settle in ${CLAIM_ROUNDS} rounds`);
  }

  #owned(claim: Claim): unknown[] {
    return [this.#tenant, claim.scope, claim.key, claim.epoch];
  }

  async complete(claim: Claim, response: StoredResponse): Promise<boolean> {
    const result = await this.#pool.query(this.#sql.complete, this.#completeParams(claim, response));
    return result.rowCount === 1;
  }

  #completeParams(claim: Claim, response: StoredResponse): unknown[] {
    return [...this.#owned(claim), response.status, JSON.stringify(response.headers), response.body];
  }

  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const result = await this.#pool.query(this.#sql.renew, [...this.#owned(claim), leaseMs]);
    return result.rowCount === 1;
  }

  async release(claim: Claim): Promise<void> {
    await this.#pool.query(this.#sql.release, this.#owned(claim));
  }

  async abandon(claim: Claim): Promise<void> {
    await this.#pool.query(this.#sql.abandon, this.#owned(claim));
  }

  async sweep(): Promise<number> {
    await this.#whenReady();
    const result = await this.#pool.query(this.#sql.sweep, [this.#tenant]);
    return result.rowCount ?? 0;
  }

  async transaction<T>(claim: Claim | undefined, work: (tx: PoolClient) => Promise<TransactionOutcome<T>>): Promise<T> {
    const client = await this.#pool.connect();
    let outcome: TransactionOutcome<T>;
    try {
      await client.query('BEGIN');
      outcome = await work(client);
      if (claim === undefined) {
        await client.query('COMMIT');
        return outcome.value;
      }
      if (outcome.store === undefined) {
        await client.query('ROLLBACK');
      } else {
        const stored = await client.query(this.#sql.complete, this.#completeParams(claim, outcome.store));
        if (stored.rowCount !== 1)
          throw new LeaseTakenOverError(`key ${JSON.stringify(claim.key)}: a newer epoch owns it`);
        await client.query('COMMIT');
        return outcome.value;
      }
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    // The outcome is not kept: the handler's writes were rolled back with it, so the key is free again.
    await this.release(claim);
    return outcome.value;
  }
}

/**
 * Idempotency records in PostgreSQL (a table per application; `tenant` to share one).
 * @example
 * import pg from 'pg';
 * const store = postgresIdempotencyStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * const guard = idempotency({ store, scopeOf, routes: { 'POST /payments': {} } });
 * guard.withIdempotency(request, async (tx) => { await tx.query('INSERT INTO payments …'); return Response.json(…) });
 */
export function postgresIdempotencyStore(options: PostgresIdempotencyStoreOptions): PostgresIdempotencyStore {
  return new PgIdempotencyStore(options);
}
