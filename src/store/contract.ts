/**
 * The store contract: one suite every store must pass (memory, file,
 * IndexedDB, and yours). Framework-agnostic: it returns named async cases;
 * map them onto your test runner.
 *
 * @example
 * for (const c of storeContract({ create: () => memoryStore() })) it(c.name, c.run);
 */
import { basicCases } from './contract/basics.js';
import { durabilityCases } from './contract/durability.js';
import { integrityCases } from './contract/integrity.js';
import type { ContractCase, StoreContractOptions } from './contract/options.js';

export type { ContractCase, StoreContractOptions } from './contract/options.js';
export { sampleRecord } from './contract/sample.js';

/**
 * Every case a store must pass. Cases that need another handle on the same
 * storage (`reopen`) or a way to damage a record (`corrupt`) are included
 * only when those are given.
 */
export function storeContract(options: StoreContractOptions): ContractCase[] {
  return [...basicCases(options), ...durabilityCases(options), ...integrityCases(options)];
}
