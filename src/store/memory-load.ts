/**
 * The memory store for a client that keeps its operations elsewhere (the
 * browser's clients, in IndexedDB): its code (memory-core.ts) is loaded
 * with `import()` when the first record is kept in memory only (a read that
 * sends no key, see flow/engine/placement.ts), handed what it uses of the
 * client (memory-kit.ts). A page whose sends are keyed writes never loads it.
 */
import type { MemoryStore, MemoryStoreOptions } from './memory-core.js';
import { MEMORY_KIT } from './memory-kit.js';

export async function loadMemoryStore(options: MemoryStoreOptions): Promise<MemoryStore> {
  return (await import('./memory-core.js')).makeMemoryStore(MEMORY_KIT, options);
}
