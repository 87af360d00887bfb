/**
 * `claimDue` on PostgreSQL: one statement, as the Postgres job queues do it
 * (graphile-worker, pg-boss, River), plus what a payment outbox needs:
 *
 *   UPDATE … WHERE key IN (SELECT … ORDER BY due, write order
 *                          FOR UPDATE SKIP LOCKED LIMIT $n) RETURNING …
 *
 * - Workers never queue behind each other: a row another claim has locked
 *   is skipped, not waited on, and no worker reads a row it will not take.
 *   The cost of a claim does not grow with the fleet.
 * - A lease has expired when the database's `now()` says so
 *   (`lease_ends_db`), never a worker's clock.
 * - Only the head of each scope is claimable (no open record of the scope
 *   written before it), so a scope's operations take effect one after
 *   another whichever workers send them.
 * - The claim bumps the epoch (the fencing token) in the columns and in the
 *   document together, so the two never disagree; an attempt a dead owner
 *   left open is closed by the claimer's next write (flow/decide/transitions.ts `claim`).
 */
import type { ClaimRequest } from '../store.js';
import type { TableNames } from './options.js';
import { DB_NOW_MS, readColumns } from './rows.js';

const OPEN = `state IN ('pending', 'in_flight')`;

/**
 * `$1` tenant, `$2` owner, `$3` lease ms, `$4` limit, `$5` due by, `$6` the
 * document's `lease.until` (the caller's clock), and with `byKeys` `$7` the keys.
 */
export function claimSql(n: TableNames, byKeys: boolean): string {
  const head = `(o.scope IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${n.table} h WHERE h.tenant = o.tenant AND h.scope = o.scope AND h.${OPEN}
        AND (h.write_order, h.seq) < (o.write_order, o.seq)))`;
  return `WITH picked AS (
      SELECT o.key FROM ${n.table} o
      WHERE o.tenant = $1 AND o.${OPEN} AND o.next_attempt_at <= $5::float8
        AND (o.lease_owner IS NULL OR o.lease_ends_db <= ${DB_NOW_MS})
        AND ${byKeys ? 'o.key = ANY($7::text[])' : head}
      ORDER BY o.next_attempt_at, o.write_order, o.seq
      LIMIT $4
      FOR UPDATE SKIP LOCKED)
    UPDATE ${n.table} r SET
      lease_owner = $2, lease_epoch = r.lease_epoch + 1, lease_expires_at = $6::bigint,
      lease_ends_db = ${DB_NOW_MS} + $3::float8,
      record = jsonb_set(jsonb_set(r.record, '{epoch}', to_jsonb(r.lease_epoch + 1)), '{lease}',
        jsonb_build_object('owner', $2::text, 'until', $6::bigint)),
      rev = r.rev + 1, updated_at = now()
    FROM picked WHERE r.tenant = $1 AND r.key = picked.key
    RETURNING r.key, ${readColumns('r.')}`;
}

/** The parameters of `claimSql` for `request`. */
export function claimValues(tenant: string, request: ClaimRequest): unknown[] {
  const values: unknown[] = [
    tenant,
    request.owner,
    request.leaseMs,
    request.limit,
    request.dueBy,
    // The document's lease end must be an integer (the record schema): rounded up, never shortened.
    Math.ceil(request.nowMs + request.leaseMs),
  ];
  if (request.keys !== undefined) values.push([...request.keys]);
  return values;
}
