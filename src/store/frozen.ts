/**
 * Deep-frozen copies of JSON data, as the memory store keeps records: a
 * copy shares, rather than copies again, what cannot change (the parts of
 * a record this store froze, and the roots `frozenShared` made). Imports
 * nothing: the memory store's lazily loaded core gets `frozenCopy` handed
 * to it (memory-kit.ts).
 */

/** Roots made by `frozenShared`: frozen all the way down, so any record may share them. */
const sharedRoots = new WeakSet<object>();

/**
 * A deep copy of JSON data in which every object and array is frozen.
 * Shared as they are, not copied: whatever is (at the same place) the very
 * object of `stored`, a record this store froze, and the roots made by
 * `frozenShared`. Neither can change, and copying them again was most of
 * this store's cost per request (a record's stored policy alone is some 60
 * objects and arrays), and most of what a kept record weighed.
 */
export function frozenCopy<T>(value: T, stored?: unknown): T {
  if (typeof value !== 'object' || value === null || value === stored) return value;
  // `isFrozen` first: a fresh object (the common case) never costs a lookup.
  if (Object.isFrozen(value) && sharedRoots.has(value)) return value;
  const within = typeof stored === 'object' && stored !== null ? (stored as Record<string, unknown>) : undefined;
  let copy: unknown;
  if (Array.isArray(value)) {
    const from = Array.isArray(within) ? within : undefined;
    copy = value.map((item, i) => frozenCopy(item, from?.[i]));
  } else {
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      fields[key] = frozenCopy((value as Record<string, unknown>)[key], within?.[key]);
    }
    copy = fields;
  }
  return Object.freeze(copy) as T;
}

/**
 * JSON data frozen all the way down, which every memory store keeps by
 * reference instead of copying it into each record: for data many records
 * carry unchanged, such as the policy an operation was written under.
 *
 * @example
 * const snapshot = frozenShared(JSON.parse(JSON.stringify(policy)));
 */
export function frozenShared<T>(value: T): T {
  const frozen = frozenCopy(value);
  if (typeof frozen === 'object' && frozen !== null) sharedRoots.add(frozen);
  return frozen;
}
