/**
 * `retry` and `discard`: what an app does about one operation that did not
 * simply succeed. Loaded with `import()` on the first of them
 * (remediation.ts), so it imports only types; what it uses of the client
 * comes in `kit` (remedy-kit.ts), as for the other chunks loaded later.
 * Each check is made on the record as stored, inside the write that acts on it.
 */
import type { InvalidStateError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import type { Loops } from '../drive/loops.js';
import type { Engine } from '../engine/engine.js';
import type { RemedyKit } from './remedy-kit.js';
import type { Outcome } from './settle.js';

/**
 * Reopens a `blocked` or `unknown` operation (see `reopen`) with a new
 * deadline, bounded by the server's key retention, and drives it. Refused
 * once the server has forgotten the key: a resend would then run twice.
 */
export async function retry(kit: RemedyKit, engine: Engine, loops: Loops, key: string): Promise<Outcome> {
  const { NotFoundError, InvalidStateError, beforeSending, policyOfRecord, reopen, guarded, outcomeOf, liveProfile } =
    kit;
  const { store, runtime, endpoints } = engine;
  const now = runtime.now();
  // Reopened before it is driven: a store failure here sent nothing.
  const updated = await beforeSending(
    key,
    store.update(key, (current) => {
      if (current === undefined) throw new NotFoundError(key);
      if (current.state !== 'blocked' && current.state !== 'unknown') {
        throw new InvalidStateError(
          key,
          current.state,
          `Only blocked or unknown operations can be retried (${key} is ${current.state})`,
        );
      }
      const policy = policyOfRecord(endpoints, current);
      const forgottenAt = current.createdAt + policy.keyRetentionMs;
      if (now >= forgottenAt) {
        throw new InvalidStateError(
          key,
          current.state,
          `The server has forgotten key ${key} (retention ended); send a new operation instead`,
        );
      }
      return reopen(current, now, Math.min(now + policy.deadlineMs, forgottenAt));
    }),
  );
  if (updated === undefined) throw new NotFoundError(key);
  return guarded(
    store,
    key,
    loops.drive(key, updated.scope).then((r) => outcomeOf(r, {}, false, liveProfile(endpoints, r), runtime)),
  );
}

/** Deletes an operation, unless `discardRefusal` (or a loop of this client running it) forbids it. */
export async function discard(
  kit: RemedyKit,
  engine: Engine,
  loops: Loops,
  key: string,
  force: boolean,
): Promise<void> {
  const { NotFoundError, InvalidStateError } = kit;
  const { store, runtime } = engine;
  if (loops.isRunning(key))
    throw new InvalidStateError(key, 'in_flight', `Operation ${key} is being driven; it cannot be discarded now`);
  // Checked on the record as stored right before deleting it (not on a copy read earlier).
  let refusal: InvalidStateError | undefined;
  let found = false;
  await store.update(key, (current) => {
    found = current !== undefined;
    if (current === undefined) return undefined;
    refusal = discardRefusal(kit, current, runtime.now(), force);
    return current;
  });
  if (!found) throw new NotFoundError(key);
  if (refusal !== undefined) throw refusal;
  // Judged again in the delete itself: a `retry` landing in between reopens what was just allowed.
  await store.delete(key, { onlyIf: (current) => discardRefusal(kit, current, runtime.now(), force) === undefined });
}

/** Why `discard` must refuse `record`, if it must. */
function discardRefusal(
  kit: RemedyKit,
  record: OperationRecord,
  nowMs: number,
  force: boolean,
): InvalidStateError | undefined {
  const { InvalidStateError, isTerminal, mayHaveTakenEffect } = kit;
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
