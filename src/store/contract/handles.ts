/** The contract's builder of cases that need a second handle on the same storage. */
import type { OperationStore } from '../store.js';
import type { ContractCase, StoreContractOptions } from './options.js';

/**
 * A case that writes through a fresh store, opens another handle on the
 * same storage (`options.reopen`) and checks through both: none when the
 * store's author gave no way to reopen it.
 */
export function acrossHandles(
  options: StoreContractOptions,
  name: string,
  write: (store: OperationStore) => Promise<void>,
  check: (again: OperationStore, store: OperationStore) => Promise<void>,
): ContractCase[] {
  const reopen = options.reopen;
  if (reopen === undefined) return [];
  return [
    {
      name,
      run: async () => {
        const store = await options.create();
        await write(store);
        await check(await reopen(store), store);
      },
    },
  ];
}
