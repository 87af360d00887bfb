/**
 * oncely/store — for authors of a store (a database, a key-value service, a
 * platform oncely does not ship one for). Universal: no `node:*` imports.
 *
 * A store implements `OperationStore` and proves it with the contract suite:
 *
 * @example
 * import { applyFilter, parseRecord, storeContract, type OperationStore } from 'oncely/store';
 * for (const c of storeContract({ create: () => myStore() })) it(c.name, c.run);
 *
 * What a store needs besides the interface: `parseRecord` to validate (and
 * migrate) every record it reads, moving a failing one aside as a
 * `QuarantineEntry`; `applyFilter` and `summaryOf` when it filters in
 * memory; the record's vocabulary (`OPERATION_STATES`, `ATTEMPT_CLASSES`,
 * `STOP_REASONS`) and `RECORD_VERSION` to index or check fields. Refuse to
 * write an invalid record with `CorruptRecordError` from `oncely`.
 */

export type {
  AttemptClass,
  AttemptRecord,
  AttemptSummary,
  EffectStatus,
  OmittedAttempts,
  OperationRecord,
  OperationState,
  ParseResult,
  SentStatus,
  StopReason,
  StoredBody,
  StoredFailure,
  StoredRequest,
  StoredResult,
  StoredTrace,
} from './model.js';
export { ATTEMPT_CLASSES, OPERATION_STATES, parseRecord, RECORD_VERSION, STOP_REASONS } from './model.js';
export type { ContractCase, StoreContractOptions } from './store/contract.js';
export { sampleRecord, storeContract } from './store/contract.js';
export type {
  ClaimRequest,
  DeleteOptions,
  OperationStore,
  QuarantineEntry,
  RecordFilter,
  RecordSummary,
  Updater,
  WriteOptions,
} from './store/store.js';
export { applyFilter, summaryOf } from './store/store.js';
