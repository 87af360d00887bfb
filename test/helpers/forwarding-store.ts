/**
 * A store that forwards every call to `inner`, except the ones given in
 * `overrides`: for tests that make one kind of write fail. (Spreading a
 * store object is not enough: a store's methods may be class methods.)
 */
import type { OperationStore } from '../../src/store/store.js';

export function forwardingStore(inner: OperationStore, overrides: Partial<OperationStore>): OperationStore {
  return {
    get: (key) => inner.get(key),
    put: (record, options) => inner.put(record, options),
    update: (key, fn, options) => inner.update(key, fn, options),
    delete: (key, options) => inner.delete(key, options),
    list: (filter) => inner.list(filter),
    quarantined: () => inner.quarantined(),
    onQuarantine: (fn) => inner.onQuarantine(fn),
    ...overrides,
  };
}
