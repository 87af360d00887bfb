/**
 * The policy a claimed operation runs under, resolved right after the claim:
 * the one place where resolving it can fail with the lease in hand, so the
 * lease is given back there (an admission, lease or claim is released on
 * every path).
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import { policyOfRecord } from '../decide/policy-snapshot.js';
import { release } from '../decide/transitions.js';
import type { Engine } from '../engine/engine.js';

/**
 * The policy of a record this client has just claimed. When this client
 * cannot know it (the record names a rule it lacks and carries no snapshot),
 * the claim is released before the error travels, so a client configured
 * with that rule can take the operation at once rather than after the lease
 * runs out. (If the release itself fails, the lease expires as usual.)
 */
export async function policyOfClaimed(engine: Engine, claimed: OperationRecord): Promise<ResolvedPolicy> {
  try {
    return policyOfRecord(engine.endpoints, claimed);
  } catch (error) {
    const stillOurs = (r: OperationRecord | undefined): r is OperationRecord =>
      r !== undefined && r.epoch === claimed.epoch && r.lease?.owner === engine.owner.id;
    await engine.store.update(claimed.key, (current) => (stillOurs(current) ? release(current) : current)).catch(noop);
    throw error;
  }
}

const noop = (): void => undefined;
