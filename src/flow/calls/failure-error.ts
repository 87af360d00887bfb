/**
 * The error a caller gets for an operation that ended other than
 * succeeded: its reason, history, remediation and whether it may have taken
 * effect, with the server's final answer and the provider's code read from
 * it; and the error of one the caller stopped waiting for before it settled.
 * Loaded with `import()` the first time a caller meets such an
 * operation (settle.ts): a page whose sends succeed never needs it. It
 * imports only types and provider-errors.ts (which only it uses); what it
 * uses of the client comes in `kit`.
 */
import type { OperationError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import type { ProviderProfile } from '../../policy/profiles.js';
import { errorResponseOf, providerErrorOf } from '../../policy/provider-errors.js';
import type { FailureKit } from './settle.js';

/**
 * The error for a record that stopped. When the record kept the server's
 * final answer it is on the error as `response`, and `profile` (the
 * endpoint's, when this client knows the rule; else the one stored with
 * the record) reads the provider's code and message from it.
 */
export function failureError(kit: FailureKit, record: OperationRecord, profile?: ProviderProfile): OperationError {
  const { OperationError, mayHaveTakenEffect } = kit;
  const failure = record.failure;
  const response = failure?.response === undefined ? undefined : errorResponseOf(failure.response);
  const readBy = profile ?? storedProfile(record);
  return new OperationError(
    `Operation ${record.key} ended ${record.state}${failure === undefined ? '' : ` (${failure.reason}): ${failure.message}`}`,
    {
      key: record.key,
      state: record.state,
      reason: failure?.reason,
      history: record.attempts,
      omitted: record.attemptsOmitted,
      status: failure?.status,
      remediation: failure?.remediation ?? 'Inspect the operation with get(key).',
      mayHaveTakenEffect: mayHaveTakenEffect(record),
      response,
      providerError: response === undefined || readBy === undefined ? undefined : providerErrorOf(readBy, response),
    },
  );
}

/** The profile as stored with the record (plain data: no `errorOf` hook survives storage). */
function storedProfile(record: OperationRecord): ProviderProfile | undefined {
  const profile = record.policySnapshot?.profile;
  return typeof profile === 'object' && profile !== null ? (profile as ProviderProfile) : undefined;
}

/**
 * The caller stopped waiting (or the client closed) before the operation
 * settled. A stored one is resumed later; one kept in memory only (it sends
 * no key, see flow/engine/placement.ts) is not, and the error says so.
 */
export function suspendedError(
  kit: FailureKit,
  record: OperationRecord,
  aborted: boolean,
  inMemory: boolean,
): OperationError {
  const { OperationError, mayHaveTakenEffect } = kit;
  const why = aborted ? 'the caller stopped waiting' : 'the client closed';
  const next = inMemory
    ? 'it was kept in memory only (no key, `persist` off): nothing will resume it'
    : 'it stays stored and will be resumed';
  return new OperationError(
    `Stopped waiting for operation ${record.key} (${why}) while it is ${record.state}; ${next}`,
    {
      key: record.key,
      state: record.state,
      history: record.attempts,
      omitted: record.attemptsOmitted,
      ...(aborted ? { reason: 'aborted' as const } : {}),
      mayHaveTakenEffect: mayHaveTakenEffect(record),
      remediation: inMemory
        ? 'Send it again if you still need the answer (or set `persist: true` to store and resume such requests).'
        : 'It stays stored: resume() (here or wherever the store is driven) finishes it with the same key. Do not send it again under a new key.',
    },
  );
}
