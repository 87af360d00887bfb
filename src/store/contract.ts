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
import type { OperationStore } from './store.js';

export type { ContractCase, StoreContractOptions } from './contract/options.js';
export { sampleRecord } from './contract/sample.js';

/**
 * Every case a store must pass. Cases that need another handle on the same
 * storage (`reopen`) or a way to damage a record (`corrupt`) are included
 * only when those are given. Each case closes the handles it opened
 * (`create`, `reopen`) when it ends, pass or fail, for stores that have a
 * `close`: run the cases one at a time.
 */
export function storeContract(options: StoreContractOptions): ContractCase[] {
  const opened: OperationStore[] = [];
  const track = async (store: OperationStore | Promise<OperationStore>): Promise<OperationStore> => {
    const handle = await store;
    opened.push(handle);
    return handle;
  };
  const { reopen } = options;
  const tracked: StoreContractOptions = {
    ...options,
    create: () => track(options.create()),
    ...(reopen === undefined ? {} : { reopen: (store: OperationStore) => track(reopen(store)) }),
  };
  const cases = [...basicCases(tracked), ...durabilityCases(tracked), ...integrityCases(tracked)];
  return cases.map((c) => ({
    name: c.name,
    run: async () => {
      const from = opened.length;
      let outcome: { failed: false } | { failed: true; error: unknown } = { failed: false };
      try {
        await c.run();
      } catch (error) {
        outcome = { failed: true, error };
      }
      // Latest first: a second handle goes before the one it was opened beside. Every one, even after a
      // close that failed; the case's own failure is the one reported.
      for (const handle of opened.splice(from).reverse()) {
        try {
          await handle.close?.();
        } catch (error) {
          if (!outcome.failed)
            outcome = { failed: true, error: new Error(`closing a store failed: ${String(error)}`, { cause: error }) };
        }
      }
      if (outcome.failed) throw outcome.error;
    },
  }));
}
