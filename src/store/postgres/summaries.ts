/**
 * `listSummaries` from the columns, without the documents: `resume()` and
 * `sweep()` on every worker of a fleet go over every open (or finished) row,
 * and shipping, parsing and validating each whole record for a key and a few
 * fields would cost more than the pass itself.
 *
 * The columns are written from the validated record in the same statement
 * as the document, so they agree with it unless someone edited the row
 * behind the store's back. The query checks that agreement on the server
 * (key, state, epoch, due time, lease): a row that fails it is read whole
 * and judged like any read (quarantined when corrupt). Every record is fully
 * validated again when it is claimed: nothing is sent on the strength of a
 * summary.
 */
import type { OperationRecord } from '../../model.js';
import { type RecordFilter, type RecordSummary, summaryOf } from '../store.js';
import { filterSql } from './rows.js';

interface SummaryRow {
  key: string;
  state: RecordSummary['state'];
  next_attempt_at: number;
  created_at_ms: number | null;
  seq_ms: number | null;
  scope: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  retain_until: number | null;
  consistent: boolean;
}

/** The summary columns, and whether the document agrees with them (a document that does not is read whole). */
function summarySelect(table: string): string {
  const number = (field: string) =>
    `CASE WHEN jsonb_typeof(record -> '${field}') = 'number' THEN (record ->> '${field}')::float8 END`;
  return `SELECT key, state, next_attempt_at, scope, lease_owner, lease_expires_at, retain_until,
      ${number('createdAt')} AS created_at_ms, ${number('seq')} AS seq_ms,
      (jsonb_typeof(record) = 'object'
        AND record ->> 'key' IS NOT DISTINCT FROM key
        AND record ->> 'state' IS NOT DISTINCT FROM state
        AND record -> 'epoch' = to_jsonb(lease_epoch)
        AND record -> 'nextAttemptAt' = to_jsonb(next_attempt_at)
        AND jsonb_typeof(record -> 'createdAt') = 'number'
        AND (record -> 'lease' -> 'owner') IS NOT DISTINCT FROM to_jsonb(lease_owner)
        AND (record -> 'lease' -> 'until') IS NOT DISTINCT FROM to_jsonb(lease_expires_at)
        AND (record -> 'retainUntil') IS NOT DISTINCT FROM to_jsonb(retain_until)
        AND (record -> 'scope') IS NOT DISTINCT FROM to_jsonb(scope)) AS consistent
    FROM ${table}`;
}

export interface SummarySource {
  table: string;
  tenant: string;
  query<T>(text: string, values: unknown[]): Promise<T[]>;
  /** Reads and judges one row (quarantining it when corrupt). */
  read(key: string): Promise<OperationRecord | undefined>;
}

export async function listSummaries(source: SummarySource, filter?: RecordFilter): Promise<RecordSummary[]> {
  const { where, values } = filterSql(filter);
  for (;;) {
    const rows = await source.query<SummaryRow>(`${summarySelect(source.table)} ${where}`, [source.tenant, ...values]);
    const summaries: RecordSummary[] = [];
    let movedAside = false;
    for (const row of rows) {
      if (row.consistent) {
        summaries.push(fromColumns(row));
        continue;
      }
      const record = await source.read(row.key);
      if (record === undefined) movedAside = true;
      else summaries.push(summaryOf(record));
    }
    // A corrupt row took a place under the limit: list again without it.
    if (!movedAside || filter?.limit === undefined) return summaries;
  }
}

/** Built in `summaryOf`'s shape, so a summary is the same whichever way it was made. */
function fromColumns(row: SummaryRow): RecordSummary {
  const summary: RecordSummary = {
    key: row.key,
    state: row.state,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at_ms ?? 0,
  };
  if (row.scope !== null) summary.scope = row.scope;
  if (row.seq_ms !== null) summary.seq = row.seq_ms;
  if (row.lease_owner !== null) summary.lease = { owner: row.lease_owner, until: row.lease_expires_at ?? 0 };
  if (row.retain_until !== null) summary.retainUntil = row.retain_until;
  return summary;
}
