/**
 * Reconciling an `unknown` operation, as pure functions: what the hook is
 * told, what a verdict makes of the record (settled `succeeded` or `failed`,
 * or left `unknown` with its next check), and when `settle` must refuse.
 * Every verdict is written against the version it was made on
 * (`reconciliation.count`): a verdict that lost a race (a webhook, a
 * `retry`, another process's check) changes nothing.
 */
import type { OperationRecord, ReconcileVerdict, Reconciliation, StoredResult } from '../../model.js';
import {
  nextCheckAt,
  type RecheckSettings,
  type ReconcileAnswer,
  type ReconcileContext,
  type ReconciledResult,
} from '../../policy/reconcile.js';
import type { revise } from './revise.js';

/** What these functions use of the client's code, handed over, not imported (see flow/calls/reconcile-kit.ts). */
export interface DecideKit {
  revise: typeof revise;
  CREDENTIAL_HEADERS: readonly string[];
}

/** Verdicts a record keeps (the latest); `reconciliation.count` keeps counting. */
export const MAX_KEPT_VERDICTS = 20;

/** What a hook or `settle` said: an answer, or for a hook that threw or answered nonsense, why not. */
export type Verdict = { by: 'hook' | 'settle'; answer: ReconcileAnswer } | { by: 'hook'; error: string };

/** The provider ids seen in the attempts' answers, oldest first, each once. */
export function providerIdsOf(record: Pick<OperationRecord, 'attempts'>): string[] {
  const ids: string[] = [];
  for (const a of record.attempts)
    if (a.providerId !== undefined && !ids.includes(a.providerId)) ids.push(a.providerId);
  return ids;
}

export function reconcileContext(record: OperationRecord, nowMs: number, keyRetentionMs: number): ReconcileContext {
  return {
    key: record.key,
    reference: record.reference,
    providerIds: providerIdsOf(record),
    method: record.request.method,
    url: record.request.url,
    createdAt: record.createdAt,
    checks: record.reconciliation?.checks ?? 0,
    withinKeyRetention: nowMs < record.createdAt + keyRetentionMs,
    record,
  };
}

/** The version a verdict is written against. */
export const versionOf = (record: OperationRecord): number => record.reconciliation?.count ?? 0;

/** A check is due: the operation is `unknown` and never checked, or its next check's time has come. */
export function checkDue(record: OperationRecord, nowMs: number): boolean {
  if (record.state !== 'unknown') return false;
  const r = record.reconciliation;
  return r === undefined || (r.nextCheckAt !== undefined && r.nextCheckAt <= nowMs);
}

/**
 * Why `settle(key, …)` (or `reconcile(key)`, the `call`) must refuse
 * `record`, if it must: only an `unknown` operation can be confirmed or refuted.
 */
export function settleRefusal(record: OperationRecord, call = 'settle'): string | undefined {
  if (record.state === 'unknown') return undefined;
  if (record.state === 'pending' || record.state === 'in_flight') {
    return `Operation ${record.key} is still being driven (${record.state}): its own answer may yet come; ${call} it once it ends unknown`;
  }
  return `Operation ${record.key} is already final (${record.state}); ${call} applies only to an unknown operation`;
}

/**
 * `record` after `verdict`, made at `nowMs`. Applied: `succeeded`, its
 * result flagged `reconciled`. Not applied: `failed`, reason `not_applied`,
 * and nothing may have taken effect any more. Unknown (or a hook failure):
 * still `unknown`, with the next check due per `recheck`, or none once they
 * are spent; kept in the store at least until then.
 */
export function applyVerdict(
  record: OperationRecord,
  verdict: Verdict,
  nowMs: number,
  recheck: RecheckSettings,
  retainMs: number,
  kit: DecideKit,
): OperationRecord {
  const { revise } = kit;
  const answer = 'answer' in verdict ? verdict.answer : undefined;
  const said: ReconcileVerdict['verdict'] =
    answer?.applied === true ? 'applied' : answer?.applied === false ? 'not_applied' : 'unknown';
  const entry: ReconcileVerdict = { at: nowMs, by: verdict.by, verdict: said };
  if ('error' in verdict) entry.error = verdict.error;
  const previous = record.reconciliation;
  const reconciliation: Reconciliation = {
    count: (previous?.count ?? 0) + 1,
    checks: (previous?.checks ?? 0) + (verdict.by === 'hook' ? 1 : 0),
    history: [...(previous?.history ?? []), entry].slice(-MAX_KEPT_VERDICTS),
  };
  const by = verdict.by === 'hook' ? 'the reconcile hook' : 'settle()';
  if (answer?.applied === true) {
    return revise(
      record,
      {
        state: 'succeeded',
        result: reconciledResult(answer.result, nowMs, kit),
        retainUntil: nowMs + retainMs,
        reconciliation,
      },
      'failure',
    );
  }
  if (answer?.applied === false) {
    return revise(record, {
      state: 'failed',
      failure: {
        reason: 'not_applied',
        message: `Not applied: ${by} found that it never took effect`,
        remediation:
          'Safe to send as a new operation (a new key) if it is still wanted: the provider did not apply this one. (Trust rests on that verdict: a search that lags behind the provider can miss an applied operation.)',
        mayHaveTakenEffect: false,
      },
      retainUntil: nowMs + retainMs,
      reconciliation,
    });
  }
  const next = verdict.by === 'hook' ? nextCheckAt(recheck, reconciliation.checks, nowMs) : previous?.nextCheckAt;
  if (next !== undefined) reconciliation.nextCheckAt = next;
  const changes: Partial<OperationRecord> = { reconciliation };
  if (next !== undefined && (record.retainUntil ?? 0) < next) changes.retainUntil = next;
  return revise(record, changes);
}

/**
 * The result kept for an operation found applied. Throws (a `TypeError`)
 * when the hook's `result` is no plain JSON: the caller counts that check
 * as a failed one.
 */
export function reconciledResult(
  given: ReconciledResult | undefined,
  nowMs: number,
  kit: Pick<DecideKit, 'CREDENTIAL_HEADERS'>,
): StoredResult {
  const result: StoredResult = {
    status: given?.status ?? 200,
    headers: {},
    replayed: false,
    receivedAt: nowMs,
    reconciled: true,
  };
  for (const [name, value] of Object.entries(given?.headers ?? {})) {
    if (typeof value !== 'string') throw new TypeError(`result.headers.${name} must be a string`);
    // Kept at rest like any stored result: never a credential.
    if (!kit.CREDENTIAL_HEADERS.includes(name.toLowerCase())) result.headers[name.toLowerCase()] = value;
  }
  if (given?.data !== undefined) {
    const text = JSON.stringify(given.data);
    if (typeof text !== 'string') throw new TypeError('result.data must be plain JSON');
    result.body = { encoding: 'json', text };
    result.headers['content-type'] ??= 'application/json';
  }
  return result;
}
