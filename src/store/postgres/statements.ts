/**
 * The fixed statements of one store handle, built once from its table names.
 *
 * The ones every operation runs (read, write, claim) are named, so each
 * connection parses and plans them once and then only executes them (as
 * graphile-worker does): the claim's plan alone cost the database more than
 * its execution. A name is derived from the text, so handles on different
 * tables never share one. `preparedStatements: false` sends them unnamed, for
 * a pooler that cannot keep a session's prepared statements.
 */
import { claimSql } from './claim.js';
import type { TableNames } from './options.js';
import { insertSql, READ_COLUMNS, updateSql, upsertSql } from './rows.js';

/** A statement as node-postgres takes it (`pool.query({ ...statement, values })`). */
export interface Statement {
  text: string;
  /** The prepared statement's name on each connection; absent: parsed and planned at every call. */
  name?: string;
}

/** FNV-1a, 64 bits as two 32-bit halves: a short name that differs for every text a store sends. */
function nameOf(text: string): string {
  let low = 0x811c9dc5;
  let high = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    low = Math.imul(low ^ c, 0x01000193) >>> 0;
    high = Math.imul(high ^ c ^ (low >>> 24), 0x01000193) >>> 0;
  }
  return `oncely_${high.toString(16).padStart(8, '0')}${low.toString(16).padStart(8, '0')}`;
}

export function statements(names: TableNames, prepared: boolean) {
  const table = names.table;
  const named = (text: string): Statement => (prepared ? { text, name: nameOf(text) } : { text });
  return {
    get: named(`SELECT ${READ_COLUMNS} FROM ${table} WHERE tenant = $1 AND key = $2`),
    insert: named(insertSql(names)),
    update: named(updateSql(names)),
    put: upsertSql(names),
    delete: `DELETE FROM ${table} WHERE tenant = $1 AND key = $2`,
    // Moves the row aside only if it is still the text we judged (rev): a concurrent repair is not quarantined.
    quarantine: `WITH moved AS (DELETE FROM ${table} WHERE tenant = $1 AND key = $2 AND rev = $3 RETURNING record::text AS raw)
      INSERT INTO ${names.quarantine} (tenant, id, problems, at, raw) SELECT $1, $2, $4::jsonb, $5, raw FROM moved
      ON CONFLICT (tenant, id) DO UPDATE SET problems = excluded.problems, at = excluded.at, raw = excluded.raw, moved_at = now()
      RETURNING raw`,
    quarantined: `SELECT id, problems, at, raw FROM ${names.quarantine} WHERE tenant = $1 ORDER BY moved_at, id`,
    claim: named(claimSql(names, false)),
    claimKeys: named(claimSql(names, true)),
  };
}
