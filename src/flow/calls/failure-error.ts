/**
 * The error a caller gets for an operation that ended other than
 * succeeded: its reason, history, remediation and whether it may have taken
 * effect, with the server's final answer and the provider's code read from
 * it.
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
