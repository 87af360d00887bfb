import { describe, expect, it } from 'vitest';
import type { Classification } from '../../../src/flow/decide/classify.js';
import { DECIDE_KIT } from '../../../src/flow/decide/decide.js';
import { decide } from '../../../src/flow/decide/next-step.js';
import type { AttemptRecord, OperationRecord } from '../../../src/model.js';
import { resolvePolicy } from '../../../src/options.js';
import { sampleRecord } from '../../../src/store.js';
import { createFakeRuntime } from '../../../src/testing.js';

const NOW = 10_000;
const policy = resolvePolicy('default', { maxAttempts: 3, backoff: { jitter: 'none', baseDelayMs: 100 } }, {});

function attempt(n: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    n,
    owner: 'o',
    startedAt: NOW - 10,
    endedAt: NOW,
    sent: 'definitely',
    effect: 'none',
    class: 'retryable',
    ...over,
  };
}

function record(attempts: AttemptRecord[], over: Partial<OperationRecord> = {}): OperationRecord {
  return sampleRecord('k', { createdAt: 0, deadlineAt: 60_000, attempts, ...over });
}

const c = (over: Partial<Classification>): Classification => ({
  class: 'retryable',
  sent: 'definitely',
  effect: 'none',
  status: 503,
  detail: 'status 503',
  ...over,
});

function run(r: OperationRecord, cls: Classification, hintMs?: number, canRefreshAuth = false) {
  return decide(
    {
      record: r,
      classification: cls,
      hintMs,
      policy,
      nowMs: NOW,
      random: createFakeRuntime().random,
      canRefreshAuth,
    },
    DECIDE_KIT,
  );
}

describe('decide', () => {
  it('completed → succeed', () => {
    expect(
      run(record([attempt(1, { class: 'completed', effect: 'applied' })]), c({ class: 'completed', status: 201 })),
    ).toEqual({
      kind: 'succeed',
    });
  });

  it('retryable → retry after backoff (budgeted)', () => {
    expect(run(record([attempt(1)]), c({}))).toEqual({ kind: 'retry', delayMs: 100, budgeted: true, why: 'retryable' });
  });

  it('correctable → blocked with remediation; 401 refreshes once when a hook exists', () => {
    const blocked = run(record([attempt(1, { status: 422 })]), c({ class: 'correctable', status: 422 }));
    expect(blocked).toMatchObject({ kind: 'stop', state: 'blocked', reason: 'correctable', status: 422 });
    expect(blocked.kind === 'stop' && blocked.remediation).toMatch(/retry\(key\)/);
    expect(run(record([attempt(1)]), c({ class: 'correctable', status: 401 }), undefined, true)).toEqual({
      kind: 'refresh_auth',
    });
    expect(run(record([attempt(1)]), c({ class: 'correctable', status: 401 }), undefined, false)).toMatchObject({
      state: 'blocked',
    });
  });

  it('permanent → failed when nothing may have taken effect, unknown when something may have', () => {
    expect(run(record([attempt(1)]), c({ class: 'permanent', status: 418 }))).toMatchObject({
      state: 'failed',
      reason: 'permanent',
    });
    const afterTimeout = record([attempt(1, { class: 'ambiguous', effect: 'unknown', sent: 'maybe' }), attempt(2)]);
    expect(run(afterTimeout, c({ class: 'permanent', status: 418 }))).toMatchObject({
      state: 'unknown',
      reason: 'permanent',
    });
  });

  it('attempts that may have done something run out → unknown (maxAttempts counts only those)', () => {
    const ambiguous = { class: 'ambiguous', effect: 'unknown', sent: 'maybe' } as const;
    const withTimeouts = record([attempt(1, ambiguous), attempt(2), attempt(3, ambiguous), attempt(4, ambiguous)]);
    expect(run(withTimeouts, { ...ambiguous, detail: 'timeout' })).toMatchObject({
      kind: 'stop',
      state: 'unknown',
      reason: 'attempts',
    });
    // The same history, but the attempt just ended said "not applied": it spends nothing.
    expect(run(withTimeouts, c({}))).toMatchObject({ kind: 'retry' });
    const with502 = record([
      attempt(1, { status: 502, effect: 'unknown' }),
      attempt(2, { status: 502, effect: 'unknown' }),
    ]);
    expect(run(with502, c({ status: 502, effect: 'unknown' }))).toMatchObject({ kind: 'retry' });
    const third502 = record([...with502.attempts, attempt(3, { status: 502, effect: 'unknown' })]);
    expect(run(third502, c({ status: 502, effect: 'unknown' }))).toMatchObject({
      state: 'unknown',
      reason: 'attempts',
    });
  });

  it('"not applied" answers (503, 429) never spend maxAttempts: the deadline ends them, as failed', () => {
    const many503 = record(Array.from({ length: 12 }, (_, i) => attempt(i + 1)));
    expect(run(many503, c({}))).toMatchObject({ kind: 'retry', why: 'retryable' });
    const late = record(many503.attempts, { deadlineAt: NOW + 50 });
    expect(run(late, c({}))).toMatchObject({ kind: 'stop', state: 'failed', reason: 'deadline' });
  });

  it('after "not applied" answers in a row the wait doubles from Retry-After, up to three hints, jitter included', () => {
    const streaks = [1, 2, 3, 4, 6].map((n) => {
      const d = run(record(Array.from({ length: n }, (_, i) => attempt(i + 1))), c({}), 1_000);
      return d.kind === 'retry' ? d.delayMs : -1;
    });
    // Grown waits 1, 2, 4, 8, 32 s, capped at three hints (3 s); the jitter (1 s) on top while it fits
    // under the cap, inside it once the wait has reached the cap.
    const ranges = [
      [1_000, 2_000],
      [2_000, 3_000],
      [2_000, 3_000],
      [2_000, 3_000],
      [2_000, 3_000],
    ];
    expect(policy.retryAfter.jitterMs).toBe(1_000);
    streaks.forEach((delayMs, i) => {
      const [low, high] = ranges[i] as [number, number];
      expect(delayMs).toBeGreaterThanOrEqual(low);
      expect(delayMs).toBeLessThanOrEqual(high);
    });
    // A timeout in between breaks the streak: the server's hint counts again from itself.
    const broken = record([attempt(1), attempt(2), attempt(3, { class: 'ambiguous', effect: 'unknown' }), attempt(4)]);
    const d = run(broken, c({}), 1_000);
    expect(d.kind === 'retry' && d.delayMs).toBeLessThanOrEqual(1_000 + policy.retryAfter.jitterMs);
  });

  it('when the grown wait would pass the deadline, the last try goes at the hint if half the time is left', () => {
    const streak = Array.from({ length: 4 }, (_, i) => attempt(i + 1));
    expect(run(record(streak, { deadlineAt: NOW + 2_500 }), c({}), 1_000)).toEqual({
      kind: 'retry',
      delayMs: 1_000,
      budgeted: true,
      why: 'retryable',
    });
    expect(run(record(streak, { deadlineAt: NOW + 1_500 }), c({}), 1_000)).toMatchObject({
      kind: 'stop',
      reason: 'deadline',
    });
  });

  it('not_sent attempts do not count against maxAttempts', () => {
    const unsent = Array.from({ length: 10 }, (_, i) => attempt(i + 1, { class: 'not_sent', sent: 'not' }));
    expect(run(record(unsent), { class: 'not_sent', sent: 'not', effect: 'none', detail: 'refused' })).toMatchObject({
      kind: 'retry',
      budgeted: false,
      why: 'not_sent',
    });
  });

  it('Retry-After is the earliest next attempt, with bounded jitter', () => {
    const d = run(record([attempt(1)]), c({}), 2_000);
    expect(d.kind).toBe('retry');
    if (d.kind === 'retry') {
      expect(d.delayMs).toBeGreaterThanOrEqual(2_000);
      expect(d.delayMs).toBeLessThanOrEqual(2_000 + policy.retryAfter.jitterMs);
    }
  });

  it('a hint past the deadline or past maxRetryAfterMs stops at once', () => {
    const r = record([attempt(1)], { deadlineAt: NOW + 5_000 });
    expect(run(r, c({}), 6_000)).toMatchObject({ kind: 'stop', reason: 'deadline', state: 'failed' });
    expect(run(record([attempt(1)]), c({}), 120_000)).toMatchObject({ kind: 'stop', reason: 'deadline' });
  });

  it('no time left for the backoff → deadline', () => {
    const r = record([attempt(1)], { deadlineAt: NOW + 50 });
    expect(run(r, c({}))).toMatchObject({ kind: 'stop', reason: 'deadline' });
  });

  it('in_progress retries after a delay and is not budgeted', () => {
    expect(
      run(record([attempt(1, { class: 'in_progress', effect: 'unknown' })]), c({ class: 'in_progress', status: 409 })),
    ).toMatchObject({
      kind: 'retry',
      budgeted: false,
      why: 'in_progress',
    });
  });
});
