/**
 * A store whose every call is reported to the runtime as real work in
 * progress (`Runtime.track`). The client wraps whatever store it is given,
 * so a test runtime never moves virtual time while a write is outstanding,
 * whatever the store does underneath (files, IndexedDB, a database).
 * With the system runtime the store is returned as is: no cost in production.
 */
import { type Runtime, systemRuntime } from '../runtime.js';
import { forwardPackedListing } from './packed-listing.js';
import type { OperationStore } from './store.js';

const TRACKED = Symbol('oncely.trackedStore');

export function trackedStore(store: OperationStore, runtime: Pick<Runtime, 'track'>): OperationStore {
  if (runtime.track === systemRuntime.track) return store;
  const marked = store as OperationStore & { [TRACKED]?: Pick<Runtime, 'track'> };
  if (marked[TRACKED] === runtime) return store;
  // Called at once (not in a microtask): a store may order calls as they come.
  const track = <T>(work: () => Promise<T>): Promise<T> => {
    let started: Promise<T>;
    try {
      started = work();
    } catch (error) {
      started = Promise.reject(error);
    }
    return runtime.track(started);
  };
  const wrapped: OperationStore & { [TRACKED]?: Pick<Runtime, 'track'> } = {
    get: (key) => track(() => store.get(key)),
    put: (record, options) => track(() => store.put(record, options)),
    update: (key, fn, options) => track(() => store.update(key, fn, options)),
    delete: (key, options) => track(() => store.delete(key, options)),
    list: (filter) => track(() => store.list(filter)),
    quarantined: () => track(() => store.quarantined()),
    onQuarantine: (fn) => store.onQuarantine(fn),
    [TRACKED]: runtime,
  };
  const listSummaries = store.listSummaries?.bind(store);
  if (listSummaries !== undefined) wrapped.listSummaries = (filter) => track(() => listSummaries(filter));
  const claimDue = store.claimDue?.bind(store);
  if (claimDue !== undefined) wrapped.claimDue = (request) => track(() => claimDue(request));
  const close = store.close?.bind(store);
  if (close !== undefined) wrapped.close = () => track(close);
  forwardPackedListing(store, wrapped, track);
  return wrapped;
}
