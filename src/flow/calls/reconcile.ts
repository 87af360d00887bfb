/**
 * The client's calls on `unknown` operations: `reconcile(key)` (the rule's
 * hook, or a replay with the same key while the provider remembers it),
 * `settle(key, outcome)` (a webhook's verdict), and the rechecks `resume()`
 * runs when their time has come. Loaded with `import()` on first use.
 */
import type { OperationRecord } from '../../model.js';
import { type ReconciledResult, readAnswer } from '../../policy/reconcile.js';
import { checkDue, reconciledResult, settleRefusal } from '../decide/reconcile.js';
import { checkWithHook, writeVerdict } from '../drive/reconcile.js';
import type { ClientCore } from './core.js';
import type { ReconcileKit } from './reconcile-kit.js';
import type { Outcome } from './settle.js';

/** What a webhook learned about an `unknown` operation (see `client.settle`). */
export type SettleOutcome = { applied: true; result?: ReconciledResult | undefined } | { applied: false };

/**
 * Reconciles an `unknown` operation now: with the rule's hook when it has
 * one; without, by a replay with the same key (`retry`) while the provider
 * still remembers it. Refused for an operation in flight or already final,
 * and past the key's retention without a hook (nothing could tell).
 */
export async function reconcile(kit: ReconcileKit, core: ClientCore, key: string): Promise<Outcome> {
  const { InvalidStateError, NotFoundError, beforeSending, liveRule, policyOfRecord } = kit;
  const { engine, remediation } = core;
  const record = await beforeSending(key, engine.store.get(key));
  if (record === undefined) throw new NotFoundError(key);
  const refusal = settleRefusal(record, 'reconcile');
  if (refusal !== undefined) throw new InvalidStateError(key, record.state, refusal);
  const rule = liveRule(engine.endpoints, record);
  if (rule?.reconcile !== undefined) return outcome(kit, core, await checkWithHook(kit, engine, record, rule));
  const policy = policyOfRecord(engine.endpoints, record);
  if (engine.runtime.now() >= record.createdAt + policy.keyRetentionMs) {
    throw new InvalidStateError(
      key,
      record.state,
      `Operation ${key} cannot be reconciled here: the provider's key retention has ended and rule "${record.policy}" has no reconcile hook. Look it up at the provider${record.reference === undefined ? '' : ` by its reference ${record.reference}`}, then settle(key, { applied })`,
    );
  }
  // Inside the retention a resend with the same key is answered by the provider's stored result.
  return remediation.retry(key);
}

/**
 * Records a webhook's verdict on an `unknown` operation: `applied: true`
 * settles it `succeeded` (with `result`, flagged `reconciled`), `false`
 * settles it `failed` (`not_applied`). Judged on the record as stored, in
 * the write itself: refused for an operation still driven or already final.
 */
export async function settle(kit: ReconcileKit, core: ClientCore, key: string, given: SettleOutcome): Promise<Outcome> {
  const { InvalidRequestError, InvalidStateError, NotFoundError, beforeSending, liveRule, policyOfRecord } = kit;
  const answer = readAnswer(given);
  if ('invalid' in answer || answer.applied === 'unknown') {
    throw new InvalidRequestError('outcome.applied', 'must be true (it took effect) or false (it never did)');
  }
  if (answer.applied === true) {
    try {
      reconciledResult(answer.result, 0, kit);
    } catch (error) {
      throw new InvalidRequestError('outcome.result', (error as Error).message);
    }
  }
  const { engine } = core;
  if (core.loops.isRunning(key)) {
    throw new InvalidStateError(key, 'in_flight', `Operation ${key} is being driven; settle it once it ends unknown`);
  }
  const read = await beforeSending(key, engine.store.get(key));
  if (read === undefined) throw new NotFoundError(key);
  const rule = liveRule(engine.endpoints, read) ?? policyOfRecord(engine.endpoints, read);
  for (let current = read; ; ) {
    const refusal = settleRefusal(current);
    if (refusal !== undefined) throw new InvalidStateError(key, current.state, refusal);
    const stored = await writeVerdict(kit, engine, current, { by: 'settle', answer }, rule);
    if (stored.state !== 'unknown') return outcome(kit, core, stored);
    // A hook's check was written in between (a new version, still unknown): judge again on it.
    current = stored;
  }
}

/**
 * The longest a client goes without looking for due checks while `resume()`
 * is called (an operation that ended `unknown` elsewhere is found then).
 */
export const RECHECK_LOOK_MS = 60_000;

/** Per client: when `recheckDue` next looks at the store (on the client's clock). */
const nextLookAt = new WeakMap<ClientCore, number>();

/**
 * Runs the checks that are due (never checked, or `nextCheckAt` passed) of
 * `unknown` operations under rules with a hook, one after another: a
 * provider's search API is no place for a burst. The store is read at most
 * once per `RECHECK_LOOK_MS`, or at the earliest check it said was due
 * (a browser resumes every few seconds; a file store reads every record to
 * list them). Resolves with the records checked.
 */
export async function recheckDue(kit: ReconcileKit, core: ClientCore): Promise<OperationRecord[]> {
  const { engine } = core;
  const now = engine.runtime.now();
  if (now < (nextLookAt.get(core) ?? Number.NEGATIVE_INFINITY)) return [];
  const unknown = await engine.store.list({ state: ['unknown'] });
  let next = now + RECHECK_LOOK_MS;
  for (const r of unknown) {
    const at = r.reconciliation?.nextCheckAt;
    if (at !== undefined && at > now) next = Math.min(next, at);
  }
  nextLookAt.set(core, next);
  const due = unknown.filter((r) => checkDue(r, now));
  const checked: OperationRecord[] = [];
  for (const record of due) {
    if (engine.shutdown.stopped) break;
    const rule = kit.liveRule(engine.endpoints, record);
    if (rule?.reconcile === undefined || core.loops.isRunning(record.key)) continue;
    checked.push(await checkWithHook(kit, engine, record, rule));
  }
  return checked;
}

/**
 * `checkWithHook`, for the loop (`engine.reconcileStopped`): a check it
 * schedules sooner than `recheckDue`'s next look brings that look forward.
 */
export async function checkStopped(
  kit: ReconcileKit,
  core: ClientCore,
  record: OperationRecord,
  rule: Parameters<typeof checkWithHook>[3],
): Promise<OperationRecord> {
  const checked = await checkWithHook(kit, core.engine, record, rule);
  const at = checked.reconciliation?.nextCheckAt;
  if (at !== undefined && at < (nextLookAt.get(core) ?? Number.NEGATIVE_INFINITY)) nextLookAt.set(core, at);
  return checked;
}

function outcome(kit: ReconcileKit, core: ClientCore, record: OperationRecord): Promise<Outcome> {
  return kit.guarded(
    core.engine.store,
    record.key,
    kit.outcomeOf(record, {}, false, kit.liveProfile(core.engine.endpoints, record), core.engine.runtime),
  );
}
