/**
 * oncely — make writes to HTTP APIs happen once.
 *
 * Universal entry: runs in browsers and Node.js. It never imports `node:*`
 * or `idb-keyval` (a test walks the import graph to prove it).
 *
 * What a caller needs and nothing more: the client, the memory store, key
 * derivation, provider profiles, and the errors with their guards. Writing a
 * store of your own: `oncely/store`. Testing: `oncely/testing`. The steps
 * inside the loop (classification, decisions, backoff, the outage gate) are
 * internal and may change in any release; their effects are set through
 * `PolicyOptions` and observed through events.
 */

export { createClient } from './client.js';
export type {
  ClientOptions,
  DiscardOptions,
  Enqueued,
  OncelyClient,
  Outcome,
  OutcomeFailed,
  OutcomeSucceeded,
  ResumeOptions,
  SendResult,
  SettleOutcome,
} from './client-api.js';
export type { AnyOncelyError, OncelyErrorCode, OncelyErrorsByCode, OncelyErrorUnion } from './errors.js';
export {
  CorruptRecordError,
  hasErrorCode,
  InvalidOptionsError,
  InvalidRequestError,
  InvalidStateError,
  isOncelyError,
  KeyConflictError,
  NotFoundError,
  OncelyError,
  OperationError,
  ResponseParseError,
  ResponseValidationError,
} from './errors.js';
export type { Listener, OncelyEventName, OncelyEvents } from './events.js';
export type { OperationAbortError } from './flow/calls/caller-abort.js';
export type { ResumeSummary } from './flow/calls/resume.js';
export type { StoreUnavailableError } from './flow/calls/store-failure.js';
export type { AttemptContext, Connectivity } from './flow/engine/engine.js';
export type { DeriveKeyInput, DeriveKeyOptions, KeyFields } from './flow/request/key.js';
export { deriveKey } from './flow/request/key.js';
export type { OncelyRequest, StandardSchemaV1 } from './flow/request/operation.js';
export type { ErrorResponse, ProblemDetails, ProviderError, RawResult } from './model/error-response.js';
export type {
  AttemptClass,
  AttemptRecord,
  AttemptSummary,
  OperationRecord,
  OperationState,
  ReconcileVerdict,
  Reconciliation,
  StopReason,
  StoredBody,
  StoredResult,
  StoredTrace,
} from './model.js';
export type { BudgetOptions, PolicyOptions, ResolvedPolicy } from './options.js';
export type { JitterKind } from './policy/backoff.js';
export type { BodyRule, HeaderRule, ProviderProfile } from './policy/profiles.js';
export { defineProfile, ietfProfile, stripeProfile } from './policy/profiles.js';
export type { ProviderErrorFields } from './policy/provider-errors.js';
export type {
  ProviderAnswer,
  ReconcileAnswer,
  ReconcileContext,
  ReconciledResult,
  ReconcileHook,
} from './policy/reconcile.js';
export type { Runtime } from './runtime.js';
export type { MemoryStore, MemoryStoreOptions } from './store/memory.js';
export { memoryStore } from './store/memory.js';
export type { DeleteOptions, OperationStore, QuarantineEntry, RecordFilter, WriteOptions } from './store/store.js';
