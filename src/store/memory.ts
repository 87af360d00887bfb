/**
 * The in-memory store: for tests, short-lived scripts and as the reference
 * implementation of the contract (memory-core.ts holds it; this module hands
 * it what it uses).
 */
import { type MemoryStore, type MemoryStoreOptions, makeMemoryStore } from './memory-core.js';
import { MEMORY_KIT } from './memory-kit.js';

export { frozenShared } from './frozen.js';
export type { MemoryStore, MemoryStoreOptions } from './memory-core.js';

/**
 * @example
 * const client = createClient({ store: memoryStore() });
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return makeMemoryStore(MEMORY_KIT, options);
}
