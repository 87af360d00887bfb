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
 * caller's now (an integer), `$7` whether to start first attempts, and with
 * `byKeys` `$8` the keys.
 *
 * Starting the first attempt in the claim (`$7`, see `ClaimRequest`) does
 * in SQL what flow/decide/transitions.ts `startAttempt` does in JavaScript,
 * for the one case that needs no history: a pending record with no attempt
 * yet, before its deadline, with its policy stored. Attempt 1 is appended
 * (owned by the claimer, started at `$6`, `sent: 'maybe'`), the state is
 * `in_flight`, and the lease covers the attempt: `$6` + the attempt timeout
 * (the stored policy's, cut at the deadline) + the lease, but never past
 * the deadline plus one attempt timeout. Any other record is claimed as is.
 *
 * Cost: the document is stored compressed, and every function that reads it
 * decompresses it whole. So `picked` reads the two fields the decision needs
 * (the stored attempt timeout, the attempts) once per row, and the
 * decision is taken on those small values (`sized`); the new document is the
 * old one with its top-level fields replaced in one `||` (four nested
 * `jsonb_set`s rebuilt it four times). Together a third of the claim's time
 * in the database.
 */
export function claimSql(n: TableNames, byKeys: boolean): string {
  const head = `(o.scope IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${n.table} h WHERE h.tenant = o.tenant AND h.scope = o.scope AND h.${OPEN}
        AND (h.write_order, h.seq) < (o.write_order, o.seq)))`;
  // The attempt timeout of the policy stored with the record (`policySnapshot`), when there is one.
  const stored = `CASE WHEN jsonb_typeof(p.snapshot_timeout) = 'number' THEN p.snapshot_timeout::float8 END`;
  const go = `($7::boolean AND p.state = 'pending' AND p.attempts = '[]'::jsonb AND p.timeout IS NOT NULL
      AND p.deadline_at > $6::float8)`;
  const timeout = `GREATEST(1, LEAST(p.timeout, p.deadline_at - $6::float8))`;
  const startedUntil = `LEAST($6::float8 + ${timeout} + $3::float8, GREATEST(p.deadline_at, $6::float8) + p.timeout)`;
  const lease = `'epoch', r.lease_epoch + 1, 'lease', jsonb_build_object('owner', $2::text, 'until', p.until)`;
  return `WITH picked AS (
      SELECT o.key, o.state, o.deadline_at,
        o.record -> 'policySnapshot' -> 'attemptTimeoutMs' AS snapshot_timeout,
        o.record -> 'attempts' AS attempts
      FROM ${n.table} o
      WHERE o.tenant = $1 AND o.${OPEN} AND o.next_attempt_at <= $5::float8
        AND (o.lease_owner IS NULL OR o.lease_ends_db <= ${DB_NOW_MS})
        AND ${byKeys ? 'o.key = ANY($8::text[])' : head}
      ORDER BY o.next_attempt_at, o.write_order, o.seq
      LIMIT $4
      FOR UPDATE SKIP LOCKED),
    timed AS (SELECT p.key, p.state, p.deadline_at, p.attempts, ${stored} AS timeout FROM picked p),
    decided AS (SELECT p.key, p.deadline_at, p.timeout, ${go} AS go FROM timed p),
    sized AS (
      SELECT p.key, p.go,
        ceil(CASE WHEN p.go THEN ${startedUntil} ELSE $6::float8 + $3::float8 END)::bigint AS until
      FROM decided p)
    UPDATE ${n.table} r SET
      lease_owner = $2, lease_epoch = r.lease_epoch + 1, lease_expires_at = p.until,
      lease_ends_db = ${DB_NOW_MS} + (p.until - $6::float8),
      state = CASE WHEN p.go THEN 'in_flight' ELSE r.state END,
      record = r.record || CASE WHEN p.go
        THEN jsonb_build_object(${lease}, 'state', 'in_flight', 'attempts',
          jsonb_build_array(jsonb_build_object('n', 1, 'owner', $2::text, 'startedAt', $6::bigint, 'sent', 'maybe')))
        ELSE jsonb_build_object(${lease}, 'state', r.state) END,
      rev = r.rev + 1, updated_at = now()
    FROM sized p WHERE r.tenant = $1 AND r.key = p.key
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
    // Times in a record are integers (the record schema): the caller's now is taken to the millisecond.
    Math.floor(request.nowMs),
    request.startFirstAttempt === true,
  ];
  if (request.keys !== undefined) values.push([...request.keys]);
  return values;
}
