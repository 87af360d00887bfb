/**
 * Rows ↔ records. The record document (`jsonb`) is the truth; the columns
 * beside it are copies of the few fields queries filter and order on, written
 * from the same validated record in the same statement (a claim changes
 * both in SQL), so they never disagree with it unless someone edited the row
 * behind the store's back. Reads validate the document like every store
 * does, and check the columns claims decide on against it (`checkRow`).
 */
import { CorruptRecordError } from '../../errors.js';
import { type OperationRecord, type OperationState, parseRecord, writeOrder } from '../../model.js';
import { frozenCopy } from '../file/parsed.js';
import { isExactUpdate } from '../file/record-file.js';
import type { RecordFilter } from '../store.js';
import type { TableNames } from './options.js';
import { deepFreeze, type Snapshots } from './snapshots.js';

/**
 * What a read selects: the row version (for compare-and-set), the columns
 * claims decide on (checked against the document) and the document as text
 * (kept raw for forensics). `prefix`: the table's alias, when a statement has one.
 */
export function readColumns(prefix = ''): string {
  return `${prefix}rev::text AS rev, ${prefix}lease_epoch::text AS epoch, ${prefix}state AS col_state,
    ${prefix}lease_owner AS col_owner, ${prefix}record::text AS raw`;
}
export const READ_COLUMNS = readColumns();

/**
 * The database's clock in epoch ms: leases are judged by it (`lease_ends_db`),
 * so a worker whose clock is off neither takes over early nor loses its own.
 */
export const DB_NOW_MS = '(extract(epoch FROM now()) * 1000)::float8';

export interface StoredRow {
  /** Row version, bumped by every write: the compare-and-set token. */
  rev: string;
  /** The fencing token as the row holds it. */
  epoch: string;
  raw: string;
  /** The state and lease owner columns, as read (absent for a row this handle wrote: it wrote them from the document). */
  col_state?: string;
  col_owner?: string | null;
}

/**
 * A stored document judged: its record, and whether that record is exactly the document as stored (false:
 * a clean copy without unknown keys, which the document's text does not spell), or its problems.
 */
export type Checked = { ok: true; record: OperationRecord; exact: boolean } | { ok: false; problems: string[] };

/**
 * `checkDocument`, then the columns claims and drains decide on against the
 * document: a row edited behind the store's back (a state column saying
 * `succeeded` over a pending document) would otherwise never be claimed nor
 * swept, nor ever reported. A mismatch is quarantined like a corrupt document.
 */
export function checkRow(key: string, row: StoredRow, snapshots?: Snapshots): Checked {
  const checked = checkDocument(key, row.raw, snapshots);
  if (!checked.ok) return checked;
  const { record } = checked;
  const problems: string[] = [];
  if (row.col_state !== undefined && row.col_state !== record.state) {
    problems.push(`state column says ${row.col_state}, the document ${record.state}`);
  }
  if (row.epoch !== String(record.epoch)) problems.push(`epoch column says ${row.epoch}, the document ${record.epoch}`);
  if (row.col_owner !== undefined && row.col_owner !== (record.lease?.owner ?? null)) {
    problems.push(`lease owner column says ${row.col_owner}, the document ${record.lease?.owner ?? 'none'}`);
  }
  return problems.length === 0 ? checked : { ok: false, problems };
}

/** `snapshots`: the policy snapshots kept (snapshots.ts), used and added to. */
export function checkDocument(key: string, raw: string, snapshots?: Snapshots): Checked {
  const kept = snapshots?.parse(raw);
  if (kept !== undefined) {
    const parsed = parseRecord(kept.value);
    if (parsed.ok && parsed.record.key === key) {
      // In the stand-in's place (checked as a valid snapshot): the kept snapshot, which is this document's.
      parsed.record.policySnapshot = kept.snapshot as Record<string, unknown>;
      return { ok: true, record: parsed.record, exact: parsed.record === kept.value };
    }
    // A problem: the document is judged whole below, so its problems are named as it is stored.
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, problems: [`not JSON: ${(error as Error).message}`] };
  }
  const parsed = parseRecord(value);
  if (!parsed.ok) return parsed;
  if (parsed.record.key !== key) return { ok: false, problems: [`stored under ${key} but names ${parsed.record.key}`] };
  const snapshot = snapshots?.learn(raw, parsed.record);
  if (snapshot !== undefined) parsed.record.policySnapshot = snapshot as Record<string, unknown>;
  return { ok: true, record: parsed.record, exact: parsed.record === value };
}

/** Validates a record before it is written: an invalid record is a bug, never data. */
export function validForWrite(record: OperationRecord): OperationRecord {
  const parsed = parseRecord(record);
  if (!parsed.ok) throw new CorruptRecordError(record.key, `refusing to write: ${parsed.problems.join('; ')}`);
  return parsed.record;
}

/**
 * What a write of `next` stores: its text, and the record a read of that
 * text returns, frozen all the way down (the cache hands it to updaters and
 * callers, who must not change what the next write starts from).
 *
 * `from`, when given, is the validated, frozen record the updater computed
 * `next` from: a field that still holds its very value passed the check
 * and cannot have changed, so only the fields the transition changed are
 * checked (as the file store does), and the copy shares the rest (the
 * request, the policy snapshot). The stored policy and `meta` hold JSON of
 * any depth: a change to either takes the full check (`parseRecord`, with
 * its depth limit), as does anything the quick check does not accept. That
 * full check and a parse of the text back, per write, were a fifth of a
 * fleet worker's own CPU per operation.
 */
export function forWrite(
  next: OperationRecord,
  from?: OperationRecord,
  snapshots?: Snapshots,
): { text: string; record: OperationRecord } {
  if (from !== undefined && next.policySnapshot === from.policySnapshot && next.meta === from.meta) {
    let exact = false;
    try {
      exact = isExactUpdate(next, from);
    } catch {
      // Unreadable (a getter that throws, say): the full check names the problem.
    }
    // A kept policy snapshot is written as its kept text (snapshots.ts).
    const text = !exact ? undefined : snapshots === undefined ? JSON.stringify(next) : snapshots.stringify(next);
    // U+0000 is written replaced (`jsonText`): the record a read returns is then the text's, below.
    if (text !== undefined && !text.includes('\\u0000')) return { text, record: frozenCopy(next, from, false) };
  }
  const text = jsonText(validForWrite(next));
  return { text, record: deepFreeze(JSON.parse(text) as OperationRecord) };
}

/** The column values of a record written as `text` (`forWrite`), in `WRITE_COLUMNS` order (the document last). */
export function columnValues(record: OperationRecord, text: string): unknown[] {
  return [
    record.fingerprint,
    record.state,
    record.scope ?? null,
    writeOrder(record),
    record.nextAttemptAt,
    record.deadlineAt,
    record.retainUntil ?? null,
    record.lease?.owner ?? null,
    record.epoch,
    record.lease?.until ?? null,
    text,
  ];
}

export const WRITE_COLUMNS = [
  'fingerprint',
  'state',
  'scope',
  'write_order',
  'next_attempt_at',
  'deadline_at',
  'retain_until',
  'lease_owner',
  'lease_epoch',
  'lease_expires_at',
  'record',
] as const;

/**
 * The record as JSON text for a `jsonb` column. `jsonb` cannot hold the
 * character U+0000 (PostgreSQL refuses the `\u0000` escape), which a stored
 * response body may contain: it is written as U+FFFD instead of failing the
 * write that settles a payment. Nothing else is changed.
 */
export function jsonText(record: OperationRecord): string {
  const text = JSON.stringify(record);
  return text.includes('\\u0000') ? text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : text;
}

/**
 * How long the lease `record` is written with has left, by the clock it was
 * written on (`now`, the writer's): the database adds it to its own `now()`
 * (`leaseEndsSql`), so the writer's clock error cancels out. Null: no lease.
 */
export function leaseLeftMs(record: OperationRecord, now: number): number | null {
  return record.lease === undefined ? null : record.lease.until - now;
}

/** `lease_ends_db` from parameter `$n` (`leaseLeftMs`). */
function leaseEndsSql(n: number): string {
  return `CASE WHEN $${n}::float8 IS NULL THEN NULL ELSE ${DB_NOW_MS} + $${n}::float8 END`;
}

/**
 * `INSERT` of a new row; `$1` tenant, `$2` key, then the column values, then
 * `leaseLeftMs`. Does nothing when the key exists.
 */
export function insertSql(n: TableNames): string {
  const params = WRITE_COLUMNS.map((c, i) => (c === 'record' ? `$${i + 3}::jsonb` : `$${i + 3}`));
  const ends = leaseEndsSql(WRITE_COLUMNS.length + 3);
  return `INSERT INTO ${n.table} (tenant, key, ${WRITE_COLUMNS.join(', ')}, lease_ends_db)
    VALUES ($1, $2, ${params.join(', ')}, ${ends})
    ON CONFLICT (tenant, key) DO NOTHING RETURNING rev::text AS rev, lease_epoch::text AS epoch`;
}

/** `put`: creates or replaces, whatever is stored (no compare-and-set); same parameters as `insertSql`. */
export function upsertSql(n: TableNames): string {
  const params = WRITE_COLUMNS.map((c, i) => (c === 'record' ? `$${i + 3}::jsonb` : `$${i + 3}`));
  const sets = WRITE_COLUMNS.map((c) => `${c} = excluded.${c}`);
  const ends = leaseEndsSql(WRITE_COLUMNS.length + 3);
  return `INSERT INTO ${n.table} (tenant, key, ${WRITE_COLUMNS.join(', ')}, lease_ends_db)
    VALUES ($1, $2, ${params.join(', ')}, ${ends})
    ON CONFLICT (tenant, key) DO UPDATE SET ${sets.join(', ')}, lease_ends_db = excluded.lease_ends_db,
      rev = ${n.table}.rev + 1, updated_at = now()
    RETURNING rev::text AS rev, lease_epoch::text AS epoch`;
}

/**
 * Compare-and-set `UPDATE`: `$1` tenant, `$2` key, `$3` the row version read,
 * `$4` the lease epoch read, then the column values, then `leaseLeftMs`.
 * Zero rows when anyone wrote the row since it was read, a lease epoch bump
 * (another owner's claim) included: the caller reads again and its updater
 * decides afresh.
 */
export function updateSql(n: TableNames): string {
  const sets = WRITE_COLUMNS.map((c, i) => `${c} = $${i + 5}${c === 'record' ? '::jsonb' : ''}`);
  const ends = leaseEndsSql(WRITE_COLUMNS.length + 5);
  return `UPDATE ${n.table} SET ${sets.join(', ')}, lease_ends_db = ${ends}, rev = rev + 1, updated_at = now()
    WHERE tenant = $1 AND key = $2 AND rev = $3 AND lease_epoch = $4 RETURNING rev::text AS rev, lease_epoch::text AS epoch`;
}

/** `WHERE … ORDER BY … LIMIT` of `list(filter)`, in the order `applyFilter` sorts; `$1` is the tenant. */
export function filterSql(filter: RecordFilter = {}): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const conditions = ['tenant = $1'];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length + 1}`;
  };
  if (filter.state !== undefined) {
    const states = ([] as OperationState[]).concat(filter.state);
    conditions.push(`state = ANY(${param(states)}::text[])`);
  }
  if (filter.dueBy !== undefined) conditions.push(`next_attempt_at <= ${param(filter.dueBy)}`);
  if (filter.scope !== undefined) conditions.push(`scope = ${param(filter.scope)}`);
  let where = `WHERE ${conditions.join(' AND ')} ORDER BY next_attempt_at, write_order, key`;
  if (filter.limit !== undefined) where += ` LIMIT ${param(filter.limit)}`;
  return { where, values };
}
