/**
 * What a PostgreSQL store handle offers beyond the store interface.
 */
import type { OperationRecord } from '../../model.js';
import type { ClaimRequest, OperationStore } from '../store.js';

export interface PostgresStore extends OperationStore {
  /**
   * Applies the schema migrations not applied yet (idempotent; safe from
   * many processes at once). Resolves with the versions it applied.
   * @example await postgresStore({ connectionString, migrate: false }).migrate()
   */
  migrate(): Promise<number[]>;
  /**
   * Calls `fn` when work may have become available to any worker (an
   * operation enqueued unleased, or a lease released), via LISTEN/NOTIFY on
   * a connection held while anyone subscribes. A hint only: keep polling.
   * Returns an unsubscribe.
   * @example store.onWake(() => void client.resume())
   */
  onWake(fn: () => void): () => void;
  /**
   * How far this process's clock is ahead of the database's (negative:
   * behind), in ms, measured over one round trip. For monitoring: leases are
   * judged on the database's clock, so a worker's skew moves only when it
   * thinks a retry is due.
   * @example if (Math.abs(await store.clockSkewMs()) > 5_000) console.warn('fix NTP on this host')
   */
  clockSkewMs(): Promise<number>;
  /** Always present here: see `OperationStore.claimDue` and claim.ts. */
  claimDue(request: ClaimRequest): Promise<OperationRecord[]>;
  /** Ends the listening connection, and the pool when the store created it. */
  close(): Promise<void>;
}
