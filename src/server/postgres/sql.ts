/**
 * The statements of the PostgreSQL idempotency store. A fresh request costs
 * two (the claim, the outcome), a replay one (the claim statement returns
 * the stored row when it cannot insert).
 */
import type { IdempotencyTableNames } from './schema.js';

const MS = `* interval '1 millisecond'`;

/**
 * One statement: insert the claim, or take the row over when it is past
 * retention (a new operation) or abandoned and allowed to run again (same
 * fingerprint, lease over, no outcome, and a safe route or a transactional
 * claim); otherwise return the row as it is. `ON CONFLICT` re-checks the
 * row's newest version, so two racing claims never both win.
 *
 * $1 tenant, $2 scope, $3 key, $4 fingerprint, $5 lease ms, $6 retention ms, $7 atomic, $8 rerun allowed.
 */
export function claimSql(n: IdempotencyTableNames): string {
  return `
    WITH claimed AS (
      INSERT INTO ${n.table} AS r (tenant, scope, key, fingerprint, atomic, lease_until, retain_until)
      VALUES ($1, $2, $3, $4, $7, now() + $5::double precision ${MS}, now() + $6::double precision ${MS})
      ON CONFLICT (tenant, scope, key) DO UPDATE SET
        fingerprint = EXCLUDED.fingerprint,
        epoch = r.epoch + 1,
        atomic = EXCLUDED.atomic,
        reported = false,
        lease_until = EXCLUDED.lease_until,
        retain_until = CASE WHEN r.retain_until <= now() THEN EXCLUDED.retain_until ELSE r.retain_until END,
        created_at = CASE WHEN r.retain_until <= now() THEN now() ELSE r.created_at END,
        status = NULL, headers = NULL, body = NULL, completed_at = NULL
      WHERE r.retain_until <= now()
         OR (r.status IS NULL AND r.lease_until <= now() AND r.fingerprint = EXCLUDED.fingerprint
             AND ($8::boolean OR r.atomic))
      RETURNING r.epoch, (r.xmax <> 0) AS rerun
    )
    SELECT true AS claimed, epoch, rerun, NULL::text AS fingerprint, NULL::integer AS status,
           NULL::jsonb AS headers, NULL::bytea AS body, NULL::double precision AS lease_ms, false AS reported
      FROM claimed
    UNION ALL
    SELECT false, epoch, false, fingerprint, status, headers, body,
           (extract(epoch FROM lease_until - now()) * 1000)::double precision, reported
      FROM ${n.table}
     WHERE tenant = $1 AND scope = $2 AND key = $3 AND retain_until > now()
       AND NOT EXISTS (SELECT 1 FROM claimed)`;
}

const OWNED = `tenant = $1 AND scope = $2 AND key = $3 AND epoch = $4 AND status IS NULL`;

/** Marks this epoch's abandoned claim reported, once: the request that does it calls the hook. */
export function reportSql(n: IdempotencyTableNames): string {
  return `UPDATE ${n.table} SET reported = true WHERE ${OWNED} AND lease_until <= now() AND NOT reported RETURNING 1`;
}

/** $5 status, $6 headers, $7 body. Fenced: only the epoch that owns the key stores. */
export function completeSql(n: IdempotencyTableNames): string {
  return `UPDATE ${n.table} SET status = $5, headers = $6, body = $7, completed_at = now() WHERE ${OWNED}`;
}

/** $5 lease ms. Fenced: only the epoch that owns the key, and only before its outcome. */
export function renewSql(n: IdempotencyTableNames): string {
  return `UPDATE ${n.table} SET lease_until = now() + $5::double precision ${MS} WHERE ${OWNED}`;
}

export function releaseSql(n: IdempotencyTableNames): string {
  return `DELETE FROM ${n.table} WHERE ${OWNED}`;
}

export function abandonSql(n: IdempotencyTableNames): string {
  return `UPDATE ${n.table} SET lease_until = least(lease_until, now()) WHERE ${OWNED}`;
}

export function sweepSql(n: IdempotencyTableNames): string {
  return `DELETE FROM ${n.table} WHERE tenant = $1 AND retain_until <= now()`;
}

/** A claim row as the claim statement returns it. */
export interface ClaimRow {
  claimed: boolean;
  epoch: string | number;
  rerun: boolean;
  fingerprint: string | null;
  status: number | null;
  headers: [string, string][] | null;
  body: Uint8Array | null;
  lease_ms: number | null;
  reported: boolean;
}
