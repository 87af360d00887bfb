/** What a store hands the contract suite, and what the suite hands back. */
import type { OperationStore } from '../store.js';

export interface StoreContractOptions {
  /** A fresh, empty store. */
  create: () => OperationStore | Promise<OperationStore>;
  /**
   * Opens another handle on the same storage as `store` (another process,
   * tab or restart). Enables the durability and cross-handle cases.
   */
  reopen?: (store: OperationStore) => OperationStore | Promise<OperationStore>;
  /** Overwrites the stored bytes of `key` with `text`. Enables the quarantine cases. */
  corrupt?: (store: OperationStore, key: string, text: string) => void | Promise<void>;
  /** Parallel updaters for the atomicity case. @default 25 */
  parallelism?: number;
}

/** One named case: `run` rejects, saying what broke, when the store breaks the contract. */
export interface ContractCase {
  name: string;
  run: () => Promise<void>;
}
