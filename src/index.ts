/**
 * oncely — make writes to HTTP APIs happen once.
 *
 * Universal entry: runs in browsers and Node.js. It never imports `node:*`
 * or `idb-keyval` (a test walks the import graph to prove it).
 */

export type {
  ClientOptions,
  Enqueued,
  OncelyClient,
  Outcome,
  ResumeOptions,
  ResumeSummary,
  SendResult,
} from './client.js';
export { createClient } from './client.js';
export type { OncelyErrorCode } from './errors.js';
export {
  CorruptRecordError,
  hasErrorCode,
  InvalidOptionsError,
  InvalidRequestError,
  InvalidStateError,
  isOncelyError,
  KeyConflictError,
  LeaseLostError,
  NotFoundError,
  OncelyError,
  OperationError,
  ResponseParseError,
  ResponseValidationError,
} from './errors.js';
export type { Listener, OncelyEventName, OncelyEvents } from './events.js';
export type { Classification, ClassifyRules, Observation } from './flow/classify.js';
export { classify } from './flow/classify.js';
export type { Decision } from './flow/decide.js';
export { decide } from './flow/decide.js';
export type { DeriveKeyInput, DeriveKeyOptions, KeyFields } from './flow/key.js';
export { deriveKey, fingerprintOf } from './flow/key.js';
export type { OncelyRequest, StandardSchemaV1 } from './flow/operation.js';
export type { AttemptContext, Connectivity } from './flow/run.js';
export type {
  AttemptClass,
  AttemptRecord,
  OperationRecord,
  OperationState,
  StopReason,
  StoredBody,
  StoredResult,
} from './model.js';
export { ATTEMPT_CLASSES, OPERATION_STATES, parseRecord, RECORD_VERSION, STOP_REASONS } from './model.js';
export type { BudgetOptions, PolicyOptions, ResolvedPolicy } from './options.js';
export { DEFAULT_POLICY } from './options.js';
export type { BackoffSettings, JitterKind } from './policy/backoff.js';
export { backoffDelayMs, hintedDelayMs } from './policy/backoff.js';
export type { Admission, GateSettings } from './policy/gate.js';
export { HostGate } from './policy/gate.js';
export type { BodyRule, HeaderRule, ProviderProfile } from './policy/profiles.js';
export { defineProfile, ietfProfile, stripeProfile } from './policy/profiles.js';
export { parseHttpDate, parseRetryAfterMs, parseServerHintMs } from './policy/retry-after.js';
export type { Runtime } from './runtime.js';
export { systemRuntime } from './runtime.js';
export type { MemoryStore, MemoryStoreOptions } from './store/memory.js';
export { memoryStore } from './store/memory.js';
export type { OperationStore, QuarantineEntry, RecordFilter, RecordSummary, Updater } from './store/store.js';
export { applyFilter, summaryOf } from './store/store.js';
