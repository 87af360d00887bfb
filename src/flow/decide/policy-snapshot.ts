/**
 * The resolved policy an operation was written ahead under, stored in its
 * record. Any process that resumes the operation (a CLI drain, a worker with
 * other endpoint rules, a newer deploy) finishes it under that policy: the
 * key header, the classification and the limits cannot change under an
 * operation that may already have reached the server.
 */
import { OperationError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import type { EndpointTable, ResolvedPolicy } from '../../options.js';
import { frozenShared } from '../../store/frozen.js';
import { mayHaveTakenEffect } from './decide.js';

/**
 * Plain data of a policy, made once per policy object and shared by every
 * record written under it: frozen, so no record can change it for the others,
 * and kept by the memory store without a copy per record.
 */
const snapshots = new WeakMap<ResolvedPolicy, Record<string, unknown>>();

export function snapshotOf(policy: ResolvedPolicy): Record<string, unknown> {
  let snapshot = snapshots.get(policy);
  if (snapshot === undefined) {
    snapshot = frozenShared(JSON.parse(JSON.stringify(policy)) as Record<string, unknown>);
    snapshots.set(policy, snapshot);
  }
  return snapshot;
}

/** Policies rebuilt from records, by the stored object (one per distinct snapshot read). */
const restored = new WeakMap<object, ResolvedPolicy>();

/**
 * The policy to finish `record` under: its stored snapshot; for a record
 * written before snapshots, the rule of that name here. A rule name this
 * process does not know is never silently replaced by the default.
 */
export function policyOfRecord(endpoints: EndpointTable, record: OperationRecord): ResolvedPolicy {
  const stored = record.policySnapshot;
  if (stored !== undefined) {
    let policy = restored.get(stored);
    if (policy === undefined) {
      policy = stored as unknown as ResolvedPolicy;
      restored.set(stored, policy);
    }
    return policy;
  }
  const policy = endpoints.byName(record.policy);
  if (policy.name !== record.policy) {
    throw new OperationError(
      `Operation ${record.key} was created under endpoint rule "${record.policy}", which this client does not have`,
      {
        key: record.key,
        state: record.state,
        history: record.attempts,
        mayHaveTakenEffect: mayHaveTakenEffect(record),
        remediation: `Resume it from a client configured with the rule "${record.policy}" (it stays stored, with its key).`,
      },
    );
  }
  return policy;
}

/**
 * The live rule of the record's name in this client, if it has one: the
 * functions of a policy (`reconcile`, `providerId`) are not stored with a
 * record, so they come from here.
 */
export function liveRule(
  endpoints: EndpointTable,
  record: Pick<OperationRecord, 'policy'>,
): ResolvedPolicy | undefined {
  const policy = endpoints.byName(record.policy);
  return policy.name === record.policy ? policy : undefined;
}
