/**
 * The error of a send whose caller stopped waiting (its signal), or whose
 * client closed, before the operation settled. Loaded with `import()` only
 * then (settle.ts, `suspendedOf`): a page whose sends settle never needs it.
 * It imports only types; what it uses of the client comes in `kit`.
 */
import type { OperationError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import type { FailureKit } from './settle.js';

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
