/**
 * What the loop makes of an attempt and of a stop: the headers it sends,
 * the result it stores, the events it emits, the typed failure a caller
 * gets when something escapes.
 */
import { isOncelyError, OperationError } from '../../errors.js';
import type { OperationRecord, StoredAnswer, StoredResult, StoredTrace } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { AttemptEnd } from '../decide/attempt-history.js';
import { mayHaveTakenEffect } from '../decide/decide.js';
import type { Engine } from '../engine/engine.js';
import { storedBodyFrom, storedResponseHeaders } from '../transport/result.js';
import type { AttemptOutput } from './attempt.js';
import { interruptionError } from './interruption.js';

/**
 * Anything that escapes the loop (the store failing — a full disk — after a
 * request may have left) reaches the caller typed, with the key and the
 * state as stored: the operation stays stored and resumable with the same key.
 *
 * Whatever layer raised it: once an attempt may have reached the server
 * (`mayHaveTakenEffect`, the one helper), a store's own error ("this handle
 * lost the directory: nothing was read or written") would tell the caller
 * the opposite of the truth, and invite a second charge under a new key. So
 * every error but an `OperationError` (which carries the flag already) is
 * wrapped then, with the store's error as `cause`.
 */
export async function asOperationFailure(
  engine: Engine,
  key: string,
  known: OperationRecord,
  error: unknown,
): Promise<unknown> {
  if (error instanceof OperationError || (isOncelyError(error) && !mayHaveTakenEffect(known))) return error;
  const stored = await engine.store.get(key).catch(() => undefined);
  const record = stored ?? known;
  const maybe = mayHaveTakenEffect(record) || mayHaveTakenEffect(known);
  if (isOncelyError(error) && !maybe) return error;
  // A store's own message may say "nothing was written": once something may have been sent, only its name is quoted.
  const why = isOncelyError(error) ? `${error.name} (${error.code}), see \`cause\`` : describe(error);
  return interruptionError(engine.runtime, { kind: 'interrupted', key, record, maybe, why, cause: error });
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function attemptsSent(record: OperationRecord): number {
  let sent = (record.attemptsOmitted?.count ?? 0) - (record.attemptsOmitted?.byClass.not_sent ?? 0);
  for (const a of record.attempts) if (a.sent !== 'not') sent++;
  return sent;
}

export type Base = { key: string; operation: string; fingerprint: string; trace?: StoredTrace | undefined };

export function emitEnded(engine: Engine, base: Base, record: OperationRecord, end: AttemptEnd): void {
  const last = record.attempts[record.attempts.length - 1];
  if (last === undefined || !engine.events.listens('attempt:ended')) return;
  engine.events.emit('attempt:ended', {
    ...base,
    attempt: last.n,
    resendCount: attemptsSent(record) - (last.sent === 'not' ? 0 : 1),
    class: end.classification.class,
    status: end.classification.status,
    detail: end.classification.detail,
    durationMs: end.nowMs - last.startedAt,
  });
}

/** The idempotency key header, unless the policy or a safe method says not to send it. */
export function keyHeaders(policy: ResolvedPolicy, record: OperationRecord): Record<string, string> {
  const headers: Record<string, string> = {};
  if (sendsKey(policy, record.request.method)) headers[policy.profile.keyHeader] = record.key;
  return headers;
}

/** The policy's `sendKey`, else: every method but the safe ones (which repeat harmlessly without a key). */
export function sendsKey(policy: Pick<ResolvedPolicy, 'sendKey'>, method: string): boolean {
  return policy.sendKey ?? !SAFE_METHODS.has(method.toUpperCase());
}

export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function storedResult(
  output: AttemptOutput,
  policy: ResolvedPolicy,
  nowMs: number,
  extra: readonly string[],
): StoredResult {
  const status = output.observation.kind === 'response' ? output.observation.status : 0;
  const replayedHeader = policy.profile.replayedHeader?.toLowerCase();
  // Its parse is kept for the caller's read that follows (see `bodyValue`).
  const body = storedBodyFrom(output.bytes, output.headers['content-type'], true);
  const result: StoredResult = {
    status,
    headers: storedResponseHeaders(output.headers, extra),
    replayed: replayedHeader !== undefined && output.headers[replayedHeader]?.toLowerCase() === 'true',
    receivedAt: nowMs,
  };
  // Assigned, not spread in: see `revise` in flow/decide/transitions.ts.
  if (body !== undefined) result.body = body;
  return result;
}

/**
 * The answer kept with a stop (`failure.response`): the attempt's response
 * when it was not a 2xx, with the headers a stored result keeps and the body
 * as read (up to `maxResponseBytes`). Undefined for a 2xx, which settles as
 * a result, and for an attempt without an answer (timeout, reset, …).
 */
export function finalAnswer(output: AttemptOutput, extra: readonly string[]): StoredAnswer | undefined {
  const observation = output.observation;
  if (observation.kind !== 'response' || (observation.status >= 200 && observation.status < 300)) return undefined;
  const answer: StoredAnswer = {
    status: observation.status,
    headers: storedResponseHeaders(output.headers, extra),
  };
  const body = storedBodyFrom(output.bytes, output.headers['content-type']);
  if (body !== undefined) answer.body = body;
  if (observation.bodyTruncatedAtBytes !== undefined) answer.truncated = true;
  return answer;
}
