/**
 * A record's list of attempts: how the next one is numbered, how an ended
 * one is written down, and how a long history is kept bounded (the first
 * and the latest attempts, the rest summed up: trim-attempts.ts, loaded
 * with the later rounds). The transitions build new lists with these;
 * nothing here writes a record.
 */
import type { AttemptRecord, OperationRecord } from '../../model.js';
import type { Classification } from './classify.js';

/** Attempts a record keeps: the first and the latest ones; the rest are summed up in `attemptsOmitted`. */
export const MAX_KEPT_ATTEMPTS = 32;

/** How an attempt ended, as the loop observed it. */
export interface AttemptEnd {
  classification: Classification;
  hintMs: number | undefined;
  nowMs: number;
  /** The provider's id for the operation, read from the answer (the rule's `providerId`). */
  providerId?: string | undefined;
}

/** The number of the next attempt (1-based), counting attempts dropped from the history. */
export function attemptNumber(record: OperationRecord): number {
  return (record.attempts[record.attempts.length - 1]?.n ?? 0) + 1;
}

/** The attempts with the last one closed by `end` (what `decide` reads). */
export function endLast(record: OperationRecord, end: AttemptEnd, delayMs?: number): AttemptRecord[] {
  // Not a spread: see `revise` (flow/decide/revise.ts). Runs twice per attempt.
  const attempts = record.attempts.slice();
  const i = attempts.length - 1;
  const last = attempts[i];
  if (last === undefined) return attempts;
  const c = end.classification;
  const ended: AttemptRecord = Object.assign({}, last, {
    endedAt: end.nowMs,
    class: c.class,
    sent: c.sent,
    effect: c.effect,
  });
  if (c.class !== 'completed') ended.error = c.detail;
  else if (ended.error !== undefined) delete ended.error;
  if (c.status !== undefined) ended.status = c.status;
  if (end.hintMs !== undefined) ended.hintMs = end.hintMs;
  if (delayMs !== undefined) ended.delayMs = delayMs;
  if (end.providerId !== undefined) ended.providerId = end.providerId;
  attempts[i] = ended;
  return attempts;
}
