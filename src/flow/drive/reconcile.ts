/**
 * Asks an endpoint's `reconcile` hook about an `unknown` operation and
 * writes its verdict (flow/decide/reconcile.ts decides what it makes of the
 * record). Loaded with `import()` the first time a rule with a hook meets an
 * `unknown` operation: clients without one never load it.
 *
 * The hook is asked without a lease: it only looks (a second look by
 * another process is harmless), and its verdict is written only onto the
 * version it was asked about, still `unknown`.
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import { readAnswer } from '../../policy/reconcile.js';
import {
  applyVerdict,
  type DecideKit,
  reconcileContext,
  reconciledResult,
  type Verdict,
  versionOf,
} from '../decide/reconcile.js';
import type { Engine } from '../engine/engine.js';
import type { describe } from './outcome.js';
import type { pause } from './pause.js';

/** What this module uses of the client's code, handed over, not imported (see flow/calls/reconcile-kit.ts). */
export interface DriveKit extends DecideKit {
  describe: typeof describe;
  pause: typeof pause;
}

/**
 * One check of `record` (as read) by `rule`'s hook, within the rule's
 * `attemptTimeoutMs`. Resolves with the record as stored afterwards; when
 * the client closes mid-check, with the record unchanged (nothing is known).
 */
export async function checkWithHook(
  kit: DriveKit,
  engine: Engine,
  record: OperationRecord,
  rule: ResolvedPolicy,
): Promise<OperationRecord> {
  const hook = rule.reconcile;
  if (hook === undefined || record.state !== 'unknown') return record;
  const verdict = await ask(kit, engine, rule, record);
  if (verdict === undefined) return record;
  return writeVerdict(kit, engine, record, verdict, rule);
}

/**
 * Writes `verdict` onto `read` if the stored record is still that version
 * and `unknown`; otherwise leaves the store as it is (someone settled or
 * reopened it meanwhile). Resolves with the record as stored.
 */
export async function writeVerdict(
  kit: DriveKit,
  engine: Engine,
  read: OperationRecord,
  verdict: Verdict,
  rule: Pick<ResolvedPolicy, 'recheck' | 'retainMs'>,
): Promise<OperationRecord> {
  let written = false;
  const stored = await engine.store.update(read.key, (current) => {
    if (current === undefined || current.state !== 'unknown' || versionOf(current) !== versionOf(read)) return current;
    written = true;
    return applyVerdict(current, verdict, engine.runtime.now(), rule.recheck, rule.retainMs, kit);
  });
  const record = stored ?? read;
  if (written && engine.events.listens('reconciled')) {
    const last = record.reconciliation?.history[record.reconciliation.history.length - 1];
    engine.events.emit('reconciled', {
      key: record.key,
      by: verdict.by,
      verdict: last?.verdict ?? 'unknown',
      state: record.state,
      error: last?.error,
      nextCheckAt: record.reconciliation?.nextCheckAt,
    });
  }
  return record;
}

/** The hook's verdict; `undefined` when the client closed before it answered. */
async function ask(
  kit: DriveKit,
  engine: Engine,
  rule: ResolvedPolicy,
  record: OperationRecord,
): Promise<Verdict | undefined> {
  const { describe, pause } = kit;
  const hook = rule.reconcile as NonNullable<ResolvedPolicy['reconcile']>;
  const timer = new AbortController();
  try {
    const answer = Promise.resolve()
      .then(() => hook(reconcileContext(record, engine.runtime.now(), rule.keyRetentionMs)))
      .then(
        (value) => ({ value }),
        (thrown: unknown) => ({ thrown }),
      );
    const expired = pause(engine, rule.attemptTimeoutMs, undefined, timer.signal).then((elapsed) =>
      elapsed ? { timedOut: true as const } : undefined,
    );
    const first = await Promise.race([answer, expired]);
    if (first === undefined) return undefined;
    if ('timedOut' in first) return failed(engine, `reconcile did not answer within ${rule.attemptTimeoutMs} ms`);
    if ('thrown' in first) return failed(engine, `reconcile threw: ${describe(first.thrown)}`, first.thrown);
    const read = readAnswer(first.value);
    if ('invalid' in read) return failed(engine, read.invalid);
    if (read.applied === true) {
      try {
        reconciledResult(read.result, 0, kit);
      } catch (error) {
        return failed(engine, `reconcile answered { applied: true } with ${describe(error)}`);
      }
    }
    return { by: 'hook', answer: read };
  } finally {
    timer.abort();
  }
}

/** A check that learned nothing: reported as an `error` event, and recorded as an `unknown` verdict with why. */
function failed(engine: Engine, why: string, cause?: unknown): Verdict {
  engine.events.emit('error', { error: cause ?? new Error(why), event: 'reconcile' });
  return { by: 'hook', error: why };
}
