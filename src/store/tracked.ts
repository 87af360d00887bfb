/**
 * A store whose every call is reported to the runtime as real work in
 * progress (`Runtime.track`). The client wraps whatever store it is given,
 * so a test runtime (or any runtime with its own `track`) never moves
 * virtual time while a write is outstanding, whatever the store does
 * underneath (files, IndexedDB, a database). With the system runtime the
 * store is returned as is: no cost in production.
 *
 * One `Proxy` for every method, not a method per member: production bundles
 * carry this module (a custom runtime's `track` is public), so it is kept small.
 */
import { type Runtime, systemRuntime } from '../runtime.js';
import { forwardPackedListing } from './packed-listing.js';
import type { OperationStore } from './store.js';

/** The `track` each wrapper reports to: a store wrapped twice for one runtime (the browser client's, then the core's) is wrapped once. */
const wrappers = new WeakMap<object, Runtime['track']>();

export function trackedStore(store: OperationStore, runtime: Pick<Runtime, 'track'>): OperationStore {
  if (runtime.track === systemRuntime.track || wrappers.get(store) === runtime.track) return store;
  // Called at once (not in a microtask): a store may order calls as they come.
  const track = <T>(work: () => T): T => {
    let started: T;
    try {
      started = work();
    } catch (error) {
      started = Promise.reject(error) as T;
    }
    return started instanceof Promise ? (runtime.track(started) as T) : started;
  };
  const wrapped = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      // `onQuarantine` subscribes and returns its unsubscribe: nothing to wait for, and a throw stays synchronous.
      return name === 'onQuarantine'
        ? value.bind(target)
        : (...args: unknown[]) => track(() => value.apply(target, args));
    },
  });
  wrappers.set(wrapped, runtime.track);
  forwardPackedListing(store, wrapped, track);
  return wrapped;
}
