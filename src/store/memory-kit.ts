/**
 * What the memory store's core (memory-core.ts, which imports only types)
 * uses of the rest of oncely, handed to it: `memoryStore` passes it, and a
 * browser client passes it to the core it loads with `import()`.
 */
import { CorruptRecordError } from '../errors.js';
import { isExactUpdate } from '../model/exact.js';
import { parseStored, withRecordValidator } from '../model/parse.js';
import { frozenCopy } from './frozen.js';
import { applyFilter } from './store.js';

export const MEMORY_KIT = {
  CorruptRecordError,
  isExactUpdate,
  parseStored,
  withRecordValidator,
  frozenCopy,
  applyFilter,
};
export type MemoryKit = typeof MEMORY_KIT;
