/**
 * Reconciling an `unknown` operation, decided in pure code: what each
 * verdict makes of the record (and what it leaves alone), the bounded
 * schedule of rechecks, the hook's answers read strictly, and the refusals
 * of `settle`. The loop that asks and writes is tested against a real
 * server and a file store in test/client/reconcile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RECONCILE_KIT } from '../../../src/flow/calls/reconcile-kit.js';
import { mayHaveTakenEffect } from '../../../src/flow/decide/decide.js';
import {
  applyVerdict,
  checkDue,
  MAX_KEPT_VERDICTS,
  providerIdsOf,
  reconcileContext,
  reconciledResult,
  settleRefusal,
  versionOf,
} from '../../../src/flow/decide/reconcile.js';
import type { AttemptRecord, OperationRecord } from '../../../src/model.js';
import { DEFAULT_POLICY, EndpointTable, type PolicyOptions } from '../../../src/options.js';
import { nextCheckAt, readAnswer } from '../../../src/policy/reconcile.js';
import { sampleRecord } from '../../../src/store.js';

const NOW = 10_000_000;
const RETAIN_MS = 86_400_000;
const RECHECK = { maxChecks: 3, delayMs: 60_000, maxDelayMs: 100_000 };

const ambiguous: AttemptRecord = {
  n: 1,
  owner: 'o',
  startedAt: NOW - 20_000,
  endedAt: NOW - 10_000,
  class: 'ambiguous',
  sent: 'maybe',
  effect: 'unknown',
  error: 'timed out',
};

function unknownRecord(overrides: Partial<OperationRecord> = {}): OperationRecord {
  return sampleRecord('k1', {
    state: 'unknown',
    createdAt: NOW - 30_000,
    attempts: [ambiguous],
    retainUntil: NOW + 1_000,
    reference: 'ref-1',
    failure: {
      reason: 'attempts',
      message: 'Gave up after 1 attempts',
      remediation: 'look it up',
      mayHaveTakenEffect: true,
    },
    ...overrides,
  });
}

describe('applyVerdict', () => {
  it('applied: succeeded, the result flagged reconciled, the failure gone, the verdict in the history', () => {
    const before = unknownRecord();
    const copy = structuredClone(before);
    const after = applyVerdict(
      before,
      { by: 'hook', answer: { applied: true, result: { status: 201, data: { id: 'pi_1' } } } },
      NOW,
      RECHECK,
      RETAIN_MS,
      RECONCILE_KIT,
    );
    expect(before).toEqual(copy);
    expect(after.state).toBe('succeeded');
    expect(after.failure).toBeUndefined();
    expect(after.result).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: '{"id":"pi_1"}' },
      replayed: false,
      receivedAt: NOW,
      reconciled: true,
    });
    expect(after.retainUntil).toBe(NOW + RETAIN_MS);
    expect(after.reconciliation).toEqual({
      count: 1,
      checks: 1,
      history: [{ at: NOW, by: 'hook', verdict: 'applied' }],
    });
    expect(after.attempts).toEqual(before.attempts);
  });

  it('applied without a result: a 200 with no body', () => {
    const after = applyVerdict(
      unknownRecord(),
      { by: 'settle', answer: { applied: true } },
      NOW,
      RECHECK,
      RETAIN_MS,
      RECONCILE_KIT,
    );
    expect(after.result).toEqual({ status: 200, headers: {}, replayed: false, receivedAt: NOW, reconciled: true });
    expect(after.reconciliation).toEqual({
      count: 1,
      checks: 0,
      history: [{ at: NOW, by: 'settle', verdict: 'applied' }],
    });
  });

  it('not applied: failed, reason not_applied, and nothing may have taken effect any more', () => {
    const before = unknownRecord();
    expect(mayHaveTakenEffect(before)).toBe(true);
    const after = applyVerdict(
      before,
      { by: 'hook', answer: { applied: false } },
      NOW,
      RECHECK,
      RETAIN_MS,
      RECONCILE_KIT,
    );
    expect(after.state).toBe('failed');
    expect(after.failure).toMatchObject({ reason: 'not_applied', mayHaveTakenEffect: false });
    expect(after.failure?.remediation).toMatch(/Safe to send as a new operation/);
    expect(mayHaveTakenEffect(after)).toBe(false);
    expect(after.result).toBeUndefined();
  });

  it('unknown: stays unknown with the next check due, doubling, capped, and none once maxChecks are spent', () => {
    let record = unknownRecord();
    const due: Array<number | undefined> = [];
    for (let i = 0; i < 4; i++) {
      record = applyVerdict(
        record,
        { by: 'hook', answer: { applied: 'unknown' } },
        NOW,
        RECHECK,
        RETAIN_MS,
        RECONCILE_KIT,
      );
      expect(record.state).toBe('unknown');
      due.push(record.reconciliation?.nextCheckAt);
    }
    // Checks 1, 2 and 3 made: the second is due 60 s after the first, the third 100 s (120 capped), then none.
    expect(due).toEqual([NOW + 60_000, NOW + 100_000, undefined, undefined]);
    expect(record.reconciliation?.checks).toBe(4);
    expect(record.failure?.reason).toBe('attempts');
  });

  it('a hook that failed: unknown, with why, and a check scheduled; kept in the store until it is due', () => {
    const after = applyVerdict(
      unknownRecord(),
      { by: 'hook', error: 'reconcile threw: boom' },
      NOW,
      RECHECK,
      RETAIN_MS,
      RECONCILE_KIT,
    );
    expect(after.state).toBe('unknown');
    expect(after.reconciliation).toEqual({
      count: 1,
      checks: 1,
      nextCheckAt: NOW + 60_000,
      history: [{ at: NOW, by: 'hook', verdict: 'unknown', error: 'reconcile threw: boom' }],
    });
    expect(after.retainUntil).toBe(NOW + 60_000);
  });

  it('keeps the latest verdicts only, and counts them all', () => {
    let record = unknownRecord();
    const many = { maxChecks: 1_000, delayMs: 1, maxDelayMs: 1 };
    for (let i = 0; i < MAX_KEPT_VERDICTS + 5; i++) {
      record = applyVerdict(
        record,
        { by: 'hook', answer: { applied: 'unknown' } },
        NOW + i,
        many,
        RETAIN_MS,
        RECONCILE_KIT,
      );
    }
    expect(record.reconciliation?.history).toHaveLength(MAX_KEPT_VERDICTS);
    expect(record.reconciliation?.history[0]?.at).toBe(NOW + 5);
    expect(versionOf(record)).toBe(MAX_KEPT_VERDICTS + 5);
  });
});

describe('the recheck schedule', () => {
  it('defaults to 5 checks, a minute doubling, at most an hour apart', () => {
    const defaults = DEFAULT_POLICY.recheck;
    expect(defaults).toEqual({ maxChecks: 5, delayMs: 60_000, maxDelayMs: 3_600_000 });
    expect([1, 2, 3, 4, 5].map((checks) => nextCheckAt(defaults, checks, 0))).toEqual([
      60_000,
      120_000,
      240_000,
      480_000,
      undefined,
    ]);
  });

  it('a check is due when never made, or when its time has come; never for another state', () => {
    expect(checkDue(unknownRecord(), NOW)).toBe(true);
    const scheduled = unknownRecord({
      reconciliation: { count: 1, checks: 1, nextCheckAt: NOW + 5, history: [] },
    });
    expect(checkDue(scheduled, NOW + 4)).toBe(false);
    expect(checkDue(scheduled, NOW + 5)).toBe(true);
    expect(checkDue(unknownRecord({ reconciliation: { count: 3, checks: 3, history: [] } }), NOW)).toBe(false);
    expect(checkDue(unknownRecord({ state: 'failed' }), NOW)).toBe(false);
  });
});

describe('what the hook is told and may answer', () => {
  it('the context: key, reference, provider ids once each, checks made, and the key retention', () => {
    const record = unknownRecord({
      attempts: [
        { ...ambiguous, providerId: 'pi_1' },
        { ...ambiguous, n: 2 },
        { ...ambiguous, n: 3, providerId: 'pi_1' },
        { ...ambiguous, n: 4, providerId: 'ch_9' },
      ],
      reconciliation: { count: 2, checks: 2, history: [] },
    });
    expect(providerIdsOf(record)).toEqual(['pi_1', 'ch_9']);
    const context = reconcileContext(record, NOW, 30_001);
    expect(context).toMatchObject({
      key: 'k1',
      reference: 'ref-1',
      providerIds: ['pi_1', 'ch_9'],
      method: 'POST',
      checks: 2,
      withinKeyRetention: true,
    });
    expect(reconcileContext(record, NOW, 30_000).withinKeyRetention).toBe(false);
  });

  it.each([
    [{ applied: true }, undefined],
    [{ applied: false }, undefined],
    [{ applied: 'unknown' }, undefined],
    [{ applied: 'yes' }, /expected \{ applied: true \| false \| 'unknown' \}/],
    [undefined, /reconcile answered undefined/],
    [null, /reconcile answered null/],
    [{ applied: true, result: 5 }, /not an object/],
    [{ applied: true, result: { status: 500 } }, /a 2xx is required/],
  ])('reads %j strictly', (answer, problem) => {
    const read = readAnswer(answer);
    if (problem === undefined) expect(read).toBe(answer);
    else expect((read as { invalid: string }).invalid).toMatch(problem);
  });

  it('a reconciled result keeps no credentials and refuses what is not JSON', () => {
    const result = reconciledResult({ headers: { 'Set-Cookie': 'a=b', 'Request-Id': 'req_1' } }, NOW, RECONCILE_KIT);
    expect(result.headers).toEqual({ 'request-id': 'req_1' });
    expect(() => reconciledResult({ data: 10n }, NOW, RECONCILE_KIT)).toThrow();
    expect(() => reconciledResult({ data: () => 1 }, NOW, RECONCILE_KIT)).toThrow(/plain JSON/);
    expect(() => reconciledResult({ headers: { a: 1 as unknown as string } }, NOW, RECONCILE_KIT)).toThrow(/headers.a/);
  });
});

describe('settle refuses what is not unknown', () => {
  it.each([
    ['pending', /still being driven/],
    ['in_flight', /still being driven/],
    ['succeeded', /already final/],
    ['failed', /already final/],
    ['blocked', /already final/],
    ['unknown', undefined],
  ] as const)('%s', (state, refusal) => {
    const why = settleRefusal(unknownRecord({ state }));
    if (refusal === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(refusal);
  });
});

describe('the rule options, checked at construction', () => {
  it.each([
    [{ reconcile: 'yes' }, 'endpoints["POST /payments"].reconcile', /must be a function/],
    [{ providerId: 1 }, 'endpoints["POST /payments"].providerId', /must be a function/],
    [{ recheck: { maxChecks: 0 } }, 'endpoints["POST /payments"].recheck.maxChecks', /./],
    [{ recheck: { every: 1 } }, 'endpoints["POST /payments"].recheck.every', /maxChecks, delayMs, maxDelayMs|unknown/],
  ])('%j is refused, naming the field', (rule, field, why) => {
    const error = (() => {
      try {
        new EndpointTable({}, { 'POST /payments': rule as PolicyOptions });
      } catch (e) {
        return e as { field?: string; message: string };
      }
      return undefined;
    })();
    expect(error?.field).toBe(field);
    expect(error?.message).toMatch(why);
  });

  it('resolves the recheck defaults under the rule, and knows whether any rule reconciles', () => {
    const reconcile = () => ({ applied: 'unknown' as const });
    const table = new EndpointTable({ recheck: { delayMs: 30_000 } }, { 'POST /payments': { reconcile } });
    expect(table.reconciles).toBe(true);
    expect(table.byName('POST /payments').recheck).toEqual({ maxChecks: 5, delayMs: 30_000, maxDelayMs: 3_600_000 });
    expect(table.byName('POST /payments').reconcile).toBe(reconcile);
    expect(new EndpointTable({}, { 'POST /payments': {} }).reconciles).toBe(false);
  });
});
