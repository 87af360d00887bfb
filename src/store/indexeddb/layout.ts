/**
 * How the IndexedDB store lays out its database, in one place: the store,
 * its quarantine and the wipe marker (browser/persistence.ts) share one
 * object store and must agree on its key prefixes.
 */

/**
 * How the store lays out its database. Stable: devtools, migrations and
 * tests that write raw bytes rely on it.
 */
export const INDEXEDDB_LAYOUT = {
  /** The only object store in the database. */
  objectStore: 'operations',
  /** A record is stored as JSON text under `recordPrefix + key`. */
  recordPrefix: 'r:',
  /** A quarantine entry is stored as a plain object under `quarantinePrefix + key + '\u0000' + suffix`. */
  quarantinePrefix: 'q:',
} as const;

/** Every key that starts with `prefix` (`;` is the code unit after `:`). */
export function prefixRange(prefix: string): IDBKeyRange {
  return IDBKeyRange.bound(prefix, `${prefix.slice(0, -1)};`, false, true);
}
