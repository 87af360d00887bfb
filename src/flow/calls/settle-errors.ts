/**
 * The errors a client turns stored records into (the error of an operation
 * that ended other than succeeded is in failure-error.ts, loaded when first
 * needed; the refusals of `discard` are in remedies.ts). Each carries the key, the state and whether an attempt may
 * have taken effect, so no caller is ever invited to pay twice.
 */
import { OperationError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import type { EndpointTable } from '../../options.js';
import type { ProviderProfile } from '../../policy/profiles.js';
import { mayHaveTakenEffect } from '../decide/decide.js';

export const noop = (): void => undefined;

/** Another owner's live lease is on it (it was claimed by someone else while the pass looked). */
export function isHeldElsewhere(record: OperationRecord | undefined, owner: string): boolean {
  // Not judged by the wall clock: a lease it calls expired is still held until this client's watch of it
  // ends (flow/engine/lease-watch.ts), and a skipping pass left it to its holder meanwhile.
  return record?.lease !== undefined && record.lease.owner !== owner;
}

/** The live profile of the record's endpoint rule, when this client has that rule (its `errorOf` hook included). */
export function liveProfile(endpoints: EndpointTable, record: OperationRecord): ProviderProfile | undefined {
  const policy = endpoints.byName(record.policy);
  return policy.name === record.policy ? policy.profile : undefined;
}

/**
 * The caller stopped waiting (or the client closed) before the operation
 * settled. A stored one is resumed later; one kept in memory only (it sends
 * no key, see flow/engine/placement.ts) is not, and the error says so.
 */
export function suspendedError(record: OperationRecord, aborted: boolean, inMemory = false): OperationError {
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
