/**
 * The fixed statements of one store handle, built once from its table names.
 */
import { claimSql } from './claim.js';
import type { TableNames } from './options.js';
import { insertSql, READ_COLUMNS, updateSql, upsertSql } from './rows.js';

export function statements(names: TableNames) {
  const table = names.table;
  return {
    get: `SELECT ${READ_COLUMNS} FROM ${table} WHERE tenant = $1 AND key = $2`,
    insert: insertSql(names),
    update: updateSql(names),
    put: upsertSql(names),
    delete: `DELETE FROM ${table} WHERE tenant = $1 AND key = $2`,
    // Moves the row aside only if it is still the text we judged (rev): a concurrent repair is not quarantined.
    quarantine: `WITH moved AS (DELETE FROM ${table} WHERE tenant = $1 AND key = $2 AND rev = $3 RETURNING record::text AS raw)
      INSERT INTO ${names.quarantine} (tenant, id, problems, at, raw) SELECT $1, $2, $4::jsonb, $5, raw FROM moved
      ON CONFLICT (tenant, id) DO UPDATE SET problems = excluded.problems, at = excluded.at, raw = excluded.raw, moved_at = now()
      RETURNING raw`,
    quarantined: `SELECT id, problems, at, raw FROM ${names.quarantine} WHERE tenant = $1 ORDER BY moved_at, id`,
    claim: claimSql(names, false),
    claimKeys: claimSql(names, true),
  };
}
