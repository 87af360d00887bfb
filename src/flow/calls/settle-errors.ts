/**
 * What the calls need to read stored records back out: whose lease holds one, and the live profile of its rule.
 * (The errors a client turns records into are in failure-error.ts, loaded when first needed: the error of an
 * operation that ended other than succeeded, or that a caller stopped waiting for; the refusals of `discard` are
 * in remedies.ts.)
 */
import type { OperationRecord } from '../../model.js';
import type { EndpointTable } from '../../options.js';
import type { ProviderProfile } from '../../policy/profiles.js';

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
