/**
 * The errors a client turns stored records into, and the refusals of
 * `discard`. Each carries the key, the state and whether an attempt may
 * have taken effect, so no caller is ever invited to pay twice.
 */
import { InvalidStateError, OperationError } from '../errors.js';
import { isTerminal, type OperationRecord, type StoredAnswer } from '../model.js';
import { mayHaveTakenEffect } from './decide.js';
import { answerBodyValue } from './result.js';

/**
 * The server's final non-2xx answer as an `OperationError` shows it
 * (`error.response`): status, the headers a stored result keeps, and the
 * body parsed (JSON when it is JSON, else its text; binary bodies are left
 * out). `truncated` when the body was longer than `maxResponseBytes`.
 *
 * @example
 * catch (error) { if (error instanceof OperationError && error.response?.status === 402) showDecline(error.response.body); }
 */
export interface FinalResponse {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: unknown;
  truncated?: boolean;
}

/** An `OperationError` with the final answer, when the record kept one. */
export type OperationErrorWithResponse = OperationError & { readonly response?: FinalResponse };

export function finalResponseOf(answer: StoredAnswer): FinalResponse {
  const response: FinalResponse = {
    status: answer.status,
    headers: answer.headers,
    body: answerBodyValue(answer.body),
  };
  if (answer.truncated === true) response.truncated = true;
  return response;
}

/** Why `discard` must refuse `record`, if it must. */
export function discardRefusal(record: OperationRecord, nowMs: number, force: boolean): InvalidStateError | undefined {
  const key = record.key;
  if (record.lease !== undefined && record.lease.until > nowMs && !isTerminal(record.state)) {
    return new InvalidStateError(
      key,
      record.state,
      `Operation ${key} is held by ${record.lease.owner} (in flight or between attempts); it cannot be discarded now`,
    );
  }
  if (!force && mayHaveTakenEffect(record) && record.state !== 'succeeded') {
    return new InvalidStateError(
      key,
      record.state,
      `Operation ${key} may have taken effect: reconcile it at the provider by its key, then discard(key, { force: true }) — or retry(key) with the same key`,
    );
  }
  return undefined;
}

export const noop = (): void => undefined;

/** Another owner's live lease is on it (it was claimed by someone else while the pass looked). */
export function isHeldElsewhere(record: OperationRecord | undefined, owner: string, nowMs: number): boolean {
  return record?.lease !== undefined && record.lease.owner !== owner && record.lease.until > nowMs;
}

export function failureError(record: OperationRecord): OperationErrorWithResponse {
  const failure = record.failure;
  const error = new OperationError(
    `Operation ${record.key} ended ${record.state}${failure === undefined ? '' : ` (${failure.reason}): ${failure.message}`}`,
    {
      key: record.key,
      state: record.state,
      reason: failure?.reason,
      attempts: record.attempts,
      status: failure?.status,
      remediation: failure?.remediation ?? 'Inspect the operation with get(key).',
      mayHaveTakenEffect: mayHaveTakenEffect(record),
    },
  );
  // Set after construction until OperationError takes `response` itself.
  if (failure?.response !== undefined) Object.assign(error, { response: finalResponseOf(failure.response) });
  return error;
}

/**
 * The caller stopped waiting (or the client closed) before the operation
 * settled. A stored one is resumed later; one kept in memory only (it sends
 * no key, see flow/placement.ts) is not, and the error says so.
 */
export function suspendedError(record: OperationRecord, aborted: boolean, inMemory = false): OperationError {
  const why = aborted ? 'the caller stopped waiting' : 'the client closed';
  const next = inMemory
    ? 'it was kept in memory only (it sends no key and `persist` is off), so nothing will resume it'
    : 'it stays stored and will be resumed';
  return new OperationError(
    `Stopped waiting for operation ${record.key} (${why}) while it is ${record.state}; ${next}`,
    {
      key: record.key,
      state: record.state,
      attempts: record.attempts,
      ...(aborted ? { reason: 'aborted' as const } : {}),
      mayHaveTakenEffect: mayHaveTakenEffect(record),
      remediation: inMemory
        ? 'Send it again if you still need the answer (it sends no idempotency key; set `persist: true` to have such requests stored and resumed).'
        : 'It stays stored and is not done yet: resume() on the same store (or another tab or process driving it) finishes it with the same key. Do not send it again under a new key.',
    },
  );
}
