/**
 * The words every layer shares: operation states, attempt classes, stop
 * reasons, and the record's version, write order and attempt counts. Plain
 * constants and small functions, no dependencies: the ground floor
 * everything else imports downward from.
 */
import type { AttemptSummary, OmittedAttempts } from './schema.js';

/** Current schema version written by this build. */
export const RECORD_VERSION = 1;

export const OPERATION_STATES = ['pending', 'in_flight', 'succeeded', 'blocked', 'failed', 'unknown'] as const;
/**
 * - `pending`: waiting for its next attempt (`nextAttemptAt`).
 * - `in_flight`: an owner holds the lease; an attempt may be on the wire.
 * - `succeeded`: completed; `result` is stored and replayed to repeat sends.
 * - `blocked`: the server refused the input or authority; fix, then `retry(key)`.
 * - `failed`: definitely not done (no attempt can have taken effect).
 * - `unknown`: may have taken effect; reconcile, or `retry(key)` with the same key.
 */
export type OperationState = (typeof OPERATION_STATES)[number];
export const TERMINAL_STATES: readonly OperationState[] = ['succeeded', 'blocked', 'failed', 'unknown'];

export const ATTEMPT_CLASSES = [
  'completed',
  'not_sent',
  'ambiguous',
  'retryable',
  'in_progress',
  'correctable',
  'permanent',
] as const;
/** The documented class of one attempt's result (see `classify`). */
export type AttemptClass = (typeof ATTEMPT_CLASSES)[number];

export const STOP_REASONS = [
  'attempts',
  'deadline',
  'budget',
  'correctable',
  'permanent',
  'aborted',
  'not_applied',
] as const;
/** Why an operation stopped without success (`not_applied`: a reconcile hook or `settle` said it never took effect). */
export type StopReason = (typeof STOP_REASONS)[number];

/** Whether the request of an attempt left this machine. */
export type SentStatus = 'not' | 'maybe' | 'definitely';
/** What we know about the attempt's effect on the server. */
export type EffectStatus = 'none' | 'unknown' | 'applied';

/** Order of creation: `seq` when the record has one, else its creation time (records written before `seq`). */
export function writeOrder(record: { seq?: number | undefined; createdAt: number }): number {
  return record.seq ?? record.createdAt * SEQ_PER_MS;
}

/** Sequence numbers per millisecond: `seq` starts from the clock so it keeps growing across restarts. */
export const SEQ_PER_MS = 1_000;

export function isTerminal(state: OperationState): boolean {
  return TERMINAL_STATES.includes(state);
}

/**
 * How many attempts may have reached the server (`attempts`: what the
 * server's log can show, what `maxAttempts` limits, an open one included)
 * and how many provably never left (`notSent`: refused, offline, aborted
 * before sending), the attempts dropped from a long history included.
 */
export function countAttempts(
  history: readonly Pick<AttemptSummary, 'sent'>[],
  omitted?: OmittedAttempts | undefined,
): { attempts: number; notSent: number } {
  let notSent = omitted?.byClass.not_sent ?? 0;
  let attempts = (omitted?.count ?? 0) - notSent;
  for (const a of history) {
    if (a.sent === 'not') notSent++;
    else attempts++;
  }
  return { attempts, notSent };
}
