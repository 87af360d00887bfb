/**
 * The ground floor: operation states, attempt classes, stop reasons, the
 * persisted record (types, parsing and migrations). Everything else
 * imports downward from here; nothing here imports from the layers above
 * (policy, flow, client, platform entries). A test walks the imports to keep
 * it so.
 */

export { CREDENTIAL_HEADERS, HEADER_NAME, STORED_HEADERS } from './model/headers.js';
export type { ParseResult } from './model/parse.js';
export { parseRecord } from './model/parse-record.js';
export type {
  AttemptRecord,
  AttemptSummary,
  OmittedAttempts,
  OperationRecord,
  ReconcileVerdict,
  Reconciliation,
  StoredAnswer,
  StoredBody,
  StoredFailure,
  StoredRequest,
  StoredResult,
  StoredTrace,
} from './model/schema.js';
export type { AttemptClass, EffectStatus, OperationState, SentStatus, StopReason } from './model/vocabulary.js';
export {
  ATTEMPT_CLASSES,
  isTerminal,
  OPERATION_STATES,
  RECORD_VERSION,
  SEQ_PER_MS,
  STOP_REASONS,
  TERMINAL_STATES,
  writeOrder,
} from './model/vocabulary.js';
