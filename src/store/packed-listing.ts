/**
 * Stores with a packed listing (the file store, and the wrappers the client
 * puts around a store: flow/engine/placement.ts, tracked.ts): what
 * `listSummaries(filter)` returns, without a limit, as `PackedSummaries`
 * filled as the records are read, in no particular order (the caller orders
 * it: `earliestFirst`). A resume pass over 100,000 records lists through it
 * (packed-summaries.ts says why).
 *
 * Internal: a `WeakMap` from the store object, not a method, so the store
 * interface stays as documented; and its own module, so the client's
 * start-up code that forwards it does not carry `PackedSummaries` (only a
 * resume pass and the file store use that).
 */
import type { PackedSummaries } from './packed-summaries.js';
import type { RecordFilter } from './store.js';

export type PackedListing = (filter: Omit<RecordFilter, 'limit'>) => Promise<PackedSummaries>;

export const packedListings = new WeakMap<object, PackedListing>();

/** Gives `wrapper` the packed listing of `store` (if it has one), through `around` (default: as is). */
export function forwardPackedListing(
  store: object,
  wrapper: object,
  around: (list: () => Promise<PackedSummaries>) => Promise<PackedSummaries> = (list) => list(),
): void {
  const listing = packedListings.get(store);
  if (listing !== undefined) packedListings.set(wrapper, (filter) => around(() => listing(filter)));
}
