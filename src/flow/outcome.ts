/**
 * What the loop makes of an attempt and of a stop: the headers it sends,
 * the result it stores, the events it emits, the typed failure a caller
 * gets when something escapes, and the one last look past the deadline.
 */
import { isOncelyError, OperationError } from '../errors.js';
import type { OperationRecord, StoredResult } from '../model.js';
import type { ResolvedPolicy } from '../options.js';
import type { AttemptOutput } from './attempt.js';
import type { AttemptEnd } from './attempt-history.js';
import { mayHaveTakenEffect } from './decide.js';
import type { Engine } from './engine.js';
import { storedBodyFrom, storedResponseHeaders } from './result.js';

/**
 * An operation taken over at (or after) its deadline whose earlier attempt
 * may have taken effect gets one more attempt with the same key, within the
 * server's key retention: the server answers with its stored result (a
 * replay costs nothing) and the operation ends with the truth instead of
 * `unknown`. Only one: attempts started after the deadline are not repeated.
 */
export function settlesByReplay(record: OperationRecord, policy: ResolvedPolicy, nowMs: number): boolean {
  if (!mayHaveTakenEffect(record) || nowMs >= record.createdAt + policy.keyRetentionMs) return false;
  return !record.attempts.some((a) => a.startedAt >= record.deadlineAt);
}

/**
 * Anything that escapes the loop (the store failing — a full disk — after a
 * request may have left) reaches the caller typed, with the key and the
 * state as stored: the operation stays stored and resumable with the same key.
 */
export async function asOperationFailure(
  engine: Engine,
  key: string,
  known: OperationRecord,
  error: unknown,
): Promise<unknown> {
  if (isOncelyError(error)) return error;
  const stored = await engine.store.get(key).catch(() => undefined);
  const record = stored ?? known;
  const maybe = mayHaveTakenEffect(record);
  return new OperationError(`Operation ${key} was interrupted: ${describe(error)}`, {
    key,
    state: record.state,
    attempts: record.attempts,
    mayHaveTakenEffect: maybe,
    remediation: maybe
      ? 'It may have taken effect and stays stored: resume() finishes it with the same key (the provider deduplicates). Do not send it again under a new key.'
      : 'It stays stored: resume() finishes it with the same key once the cause is fixed.',
    cause: error,
  });
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function attemptsSent(record: OperationRecord): number {
  let sent = (record.attemptsOmitted?.count ?? 0) - (record.attemptsOmitted?.byClass.not_sent ?? 0);
  for (const a of record.attempts) if (a.sent !== 'not') sent++;
  return sent;
}

export type Base = { key: string; operation: string; fingerprint: string };

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
  const method = record.request.method.toUpperCase();
  const sendKey = policy.sendKey ?? !SAFE_METHODS.has(method);
  if (sendKey) headers[policy.profile.keyHeader] = record.key;
  return headers;
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
  const body = storedBodyFrom(output.bytes, output.headers['content-type']);
  const result: StoredResult = {
    status,
    headers: storedResponseHeaders(output.headers, extra),
    replayed: replayedHeader !== undefined && output.headers[replayedHeader]?.toLowerCase() === 'true',
    receivedAt: nowMs,
  };
  // Assigned, not spread in: see `revise` in transitions.ts.
  if (body !== undefined) result.body = body;
  return result;
}
