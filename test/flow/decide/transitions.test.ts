/**
 * Every record transition, as a table: a record from `rec` (plus the
 * transition's arguments) → the fields it must have afterwards. Each row
 * states the whole change (`change`, `dropped`): every other stored field
 * must come out as it went in, and the input must not be mutated. Refusals
 * (a record another owner holds, a stale epoch, a record left alone) are
 * rows too: the very same object back, or the error.
 */
import { describe, expect, it } from 'vitest';
import { LeaseLostError, NotFoundError } from '../../../src/errors.js';
import type { AttemptEnd } from '../../../src/flow/decide/attempt-history.js';
import { endLast, MAX_KEPT_ATTEMPTS } from '../../../src/flow/decide/attempt-history.js';
import { claim as claimWith } from '../../../src/flow/decide/claim.js';
import type { Classification } from '../../../src/flow/decide/classify.js';
import { countsTowardMaxAttempts, mayHaveTakenEffect, type Stop } from '../../../src/flow/decide/decide.js';
import * as retryTransitions from '../../../src/flow/decide/retry-transitions.js';
import { revise } from '../../../src/flow/decide/revise.js';
import * as settleStop from '../../../src/flow/decide/settle-stop.js';
import {
  assertFenced,
  CLAIM_KIT,
  claimOutcome,
  create,
  fenceForeign,
  leaseUntil,
  type Owner,
  release,
  reopen,
  startAttempt,
  succeed,
} from '../../../src/flow/decide/transitions.js';
import { dropOldAttempts, type Trim } from '../../../src/flow/decide/trim-attempts.js';
import type { PreparedOperation } from '../../../src/flow/request/operation.js';
import { type AttemptRecord, type OperationRecord, RECORD_VERSION, type StoredResult } from '../../../src/model.js';
import { resolvePolicy } from '../../../src/options.js';

/** The changes that follow an attempt that did not simply succeed, with the kit the loop hands them. */
const RETRY_KIT = { revise, endLast, leaseUntil };
const endAttempt = (r: OperationRecord, e: AttemptEnd) => retryTransitions.endAttempt(RETRY_KIT, r, e);
const scheduleRetry = (r: OperationRecord, e: AttemptEnd, delayMs: number, owner: Owner, counts: boolean) =>
  retryTransitions.scheduleRetry(RETRY_KIT, r, e, delayMs, owner, counts);
const refreshAuth = (r: OperationRecord, e: AttemptEnd, owner: Owner) =>
  retryTransitions.refreshAuth(RETRY_KIT, r, e, owner);
/** A stop's record and clear()'s abandon, with the kit the loop (or the browser client) hands them. */
const settleStopped = (
  ...args: Parameters<typeof settleStop.settleStopped> extends [unknown, ...infer R] ? R : never
) => settleStop.settleStopped(RETRY_KIT, ...args);
const abandon = (r: OperationRecord, stop: Stop, nowMs: number) => settleStop.abandon(RETRY_KIT, r, stop, nowMs);

/** The claim (claim.ts), handed what it uses of transitions.ts as the loop hands it. */
const claim = (...args: Parameters<typeof claimWith> extends [unknown, ...infer R] ? R : never) =>
  claimWith(CLAIM_KIT, ...args);

const NOW = 100_000;
/** A final non-2xx answer as the loop keeps it (see `finalAnswer`). */
const DECLINE = {
  status: 402,
  headers: { 'content-type': 'application/json' },
  body: { encoding: 'json' as const, text: '{"error":{"decline_code":"insufficient_funds"}}' },
};
const ME: Owner = { id: 'me', leaseMs: 10_000 };
const LATER = NOW + 5_000;
const EARLIER = NOW - 1;

/** A pending record at epoch 3, unleased, due since 90 s, deadline at 150 s; `over` changes any field. */
function rec(over: Partial<OperationRecord> = {}): OperationRecord {
  return {
    v: RECORD_VERSION,
    key: 'k1',
    request: { method: 'POST', url: 'https://api.test/payments', headers: {} },
    fingerprint: 'f'.repeat(64),
    policy: 'default',
    createdAt: 90_000,
    deadlineAt: 150_000,
    state: 'pending',
    epoch: 3,
    attempts: [],
    nextAttemptAt: 90_000,
    backoff: { retries: 0, lastDelayMs: 0 },
    ...over,
  };
}

/** Attempt `n`, still open (started, no end yet). */
const open = (n: number, owner = 'me'): AttemptRecord => ({ n, owner, startedAt: 95_000, sent: 'maybe' });
/** Attempt `n`, ended as a 503. */
const ended503 = (n: number): AttemptRecord => ({
  n,
  owner: 'me',
  startedAt: 90_000 + n,
  endedAt: 90_100 + n,
  class: 'retryable',
  status: 503,
  error: 'status 503',
  sent: 'definitely',
  effect: 'none',
});

const RETRYABLE: Classification = {
  class: 'retryable',
  sent: 'definitely',
  effect: 'none',
  status: 503,
  detail: 'status 503',
};
const COMPLETED: Classification = {
  class: 'completed',
  sent: 'definitely',
  effect: 'applied',
  status: 201,
  detail: 'status 201',
};
const end = (classification: Classification, hintMs?: number): AttemptEnd => ({ classification, hintMs, nowMs: NOW });

const STOP: Stop = {
  kind: 'stop',
  state: 'failed',
  reason: 'aborted',
  message: 'The app cleared it',
  remediation: 'Send it again if still wanted',
  mayHaveTakenEffect: false,
};

const RESULT: StoredResult = {
  status: 201,
  headers: {},
  body: { encoding: 'text', text: 'ok' },
  replayed: false,
  receivedAt: NOW,
};

const FIELDS = [
  'state',
  'epoch',
  'lease',
  'attempts',
  'attemptsOmitted',
  'failure',
  'backoff',
  'retainUntil',
  'nextAttemptAt',
  'deadlineAt',
  'authRefreshed',
  'result',
  'seq',
  'policySnapshot',
  'scope',
  'meta',
  'key',
  'request',
  'fingerprint',
  'createdAt',
] as const satisfies readonly (keyof OperationRecord)[];

/** The fields a transition may touch, present ones only (so a dropped key is seen as dropped). */
function fieldsOf(record: OperationRecord): Record<string, unknown> {
  return Object.fromEntries(FIELDS.filter((k) => Object.hasOwn(record, k)).map((k) => [k, record[k]]));
}

interface Row {
  name: string;
  input: OperationRecord;
  act: (record: OperationRecord) => OperationRecord;
  /** Fields set by the transition; every other field must come out unchanged. */
  change?: Partial<OperationRecord>;
  /** Fields the transition removes. */
  dropped?: (keyof OperationRecord)[];
  /** A refusal: the very same object comes back. */
  same?: true;
}

/** One table row: the input is not mutated, and the output is exactly input − dropped + change (or the input itself). */
function check({ input, act, change = {}, dropped = [], same }: Row): void {
  const before = structuredClone(input);
  const after = act(input);
  expect(input).toStrictEqual(before);
  if (same) {
    expect(after).toBe(input);
    return;
  }
  expect(after).not.toBe(input);
  const want = fieldsOf(before);
  for (const k of dropped) delete want[k];
  Object.assign(want, change);
  expect(fieldsOf(after)).toStrictEqual(want);
}

describe('create', () => {
  const policy = resolvePolicy('POST /payments', {}, { deadlineMs: 20_000 });
  const prepared: PreparedOperation = {
    key: 'k9',
    request: { method: 'POST', url: 'https://api.test/payments', headers: {} },
    fingerprint: 'e'.repeat(64),
  };
  const base = {
    v: RECORD_VERSION,
    key: 'k9',
    request: prepared.request,
    fingerprint: prepared.fingerprint,
    policy: 'POST /payments',
    createdAt: NOW,
    deadlineAt: NOW + 20_000,
    state: 'pending',
    epoch: 1,
    lease: { owner: 'me', until: NOW + ME.leaseMs },
    attempts: [],
    nextAttemptAt: NOW,
    backoff: { retries: 0, lastDelayMs: 0 },
    seq: 7,
    policySnapshot: JSON.parse(JSON.stringify(policy)),
  };
  it.each([
    { name: 'no scope or meta: none stored', prepared, input: {}, extra: {} },
    { name: 'a scope is kept', prepared, input: { scope: 'cart-1' }, extra: { scope: 'cart-1' } },
    {
      name: "the caller's meta, when none was prepared",
      prepared,
      input: { meta: { a: 1 } },
      extra: { meta: { a: 1 } },
    },
    {
      name: 'the prepared (plain-JSON) meta wins',
      prepared: { ...prepared, meta: { b: 2 } },
      input: { meta: { a: 1 } },
      extra: { meta: { b: 2 } },
    },
  ])('$name', ({ prepared: p, input, extra }) => {
    expect(create(p, policy, input, NOW, ME, 7)).toStrictEqual({ ...base, ...extra });
  });
});

describe('claim', () => {
  it.each<Row & { judge?: (lease: { owner: string; until: number }, epoch: number) => boolean }>([
    {
      name: 'unleased: ours, epoch bumped, leased from now',
      input: rec(),
      act: (r) => claim(r, 'k1', ME, NOW),
      change: { epoch: 4, lease: { owner: 'me', until: NOW + ME.leaseMs } },
    },
    {
      name: 'not yet due: the lease covers the wait',
      input: rec({ nextAttemptAt: LATER }),
      act: (r) => claim(r, 'k1', ME, NOW),
      change: { epoch: 4, lease: { owner: 'me', until: LATER + ME.leaseMs } },
    },
    {
      name: 'the lease never reaches past deadline + one attempt timeout',
      input: rec({ deadlineAt: NOW + 1_000, policySnapshot: { attemptTimeoutMs: 2_000 } }),
      act: (r) => claim(r, 'k1', ME, NOW),
      change: { epoch: 4, lease: { owner: 'me', until: NOW + 3_000 } },
    },
    {
      name: "another owner's expired lease: taken, its open attempt closed as ambiguous",
      input: rec({
        state: 'in_flight',
        lease: { owner: 'them', until: EARLIER },
        attempts: [ended503(1), open(2, 'them')],
      }),
      act: (r) => claim(r, 'k1', ME, NOW),
      change: {
        state: 'pending',
        epoch: 4,
        lease: { owner: 'me', until: NOW + ME.leaseMs },
        attempts: [
          ended503(1),
          {
            ...open(2, 'them'),
            endedAt: NOW,
            class: 'ambiguous',
            sent: 'maybe',
            effect: 'unknown',
            error: 'owner them lost its lease during the attempt',
          },
        ],
      },
    },
    {
      name: 'our own lease on an in-flight record (restart with a stable id): re-claimed',
      input: rec({ state: 'in_flight', lease: { owner: 'me', until: LATER }, attempts: [open(1)] }),
      act: (r) => claim(r, 'k1', ME, NOW),
      change: {
        state: 'pending',
        epoch: 4,
        lease: { owner: 'me', until: NOW + ME.leaseMs },
        attempts: [
          {
            ...open(1),
            endedAt: NOW,
            class: 'ambiguous',
            sent: 'maybe',
            effect: 'unknown',
            error: 'owner me lost its lease during the attempt',
          },
        ],
      },
    },
    {
      name: 'the judge of foreign leases decides, not the lease end (it says expired)',
      input: rec({ lease: { owner: 'them', until: LATER } }),
      act: (r) => claim(r, 'k1', ME, NOW, () => true),
      change: { epoch: 4, lease: { owner: 'me', until: NOW + ME.leaseMs } },
    },
    {
      name: 'refused: another owner holds it until later',
      input: rec({ lease: { owner: 'them', until: LATER } }),
      act: (r) => claim(r, 'k1', ME, NOW),
      same: true,
    },
    {
      name: 'refused: the judge says not expired, though the lease end has passed',
      input: rec({ lease: { owner: 'them', until: EARLIER } }),
      act: (r) => claim(r, 'k1', ME, NOW, () => false),
      same: true,
    },
    {
      name: 'ours and idle: nothing to write',
      input: rec({ lease: { owner: 'me', until: LATER } }),
      act: (r) => claim(r, 'k1', ME, NOW),
      same: true,
    },
    {
      name: 'terminal: left as it is',
      input: rec({ state: 'succeeded', lease: undefined, result: RESULT }),
      act: (r) => claim(r, 'k1', ME, NOW),
      same: true,
    },
  ])('$name', (row) => check(row));

  it('throws NotFoundError for a missing record', () => {
    expect(() => claim(undefined, 'k1', ME, NOW)).toThrow(NotFoundError);
  });
});

describe('claimOutcome', () => {
  it.each([
    { name: 'terminal', record: rec({ state: 'failed' }), want: { kind: 'terminal' } },
    { name: 'ours', record: rec({ lease: { owner: 'me', until: LATER } }), want: { kind: 'claimed' } },
    {
      name: 'held elsewhere',
      record: rec({ lease: { owner: 'them', until: LATER } }),
      want: { kind: 'busy', untilMs: LATER },
    },
    { name: 'unleased (a claim that did not stick)', record: rec(), want: { kind: 'busy', untilMs: 0 } },
  ])('$name → $want.kind', ({ record, want }) => {
    expect(claimOutcome(record, ME)).toStrictEqual({ ...want, record });
  });
});

describe('assertFenced', () => {
  const ours = rec({ lease: { owner: 'me', until: LATER } });
  it('passes the record through while it is ours at that epoch', () => {
    expect(assertFenced(ours, 'k1', ME, 3)).toBe(ours);
  });
  it.each([
    { name: 'a stale epoch (someone claimed it since)', record: ours, epoch: 2 },
    { name: 'a newer epoch than ours', record: ours, epoch: 4 },
    { name: 'leased to another owner', record: rec({ lease: { owner: 'them', until: LATER } }), epoch: 3 },
    { name: 'unleased (fenced by a clear)', record: rec(), epoch: 3 },
    { name: 'deleted', record: undefined, epoch: 3 },
  ])('refuses $name', ({ record, epoch }) => {
    expect(() => assertFenced(record, 'k1', ME, epoch)).toThrow(LeaseLostError);
  });
});

describe('startAttempt', () => {
  const leased = { lease: { owner: 'me', until: LATER } };
  const many = Array.from({ length: MAX_KEPT_ATTEMPTS }, (_, i) => ended503(i + 1));
  /** The trim the loop hands over (trim-attempts.ts, with the kit the later rounds' chunk is given). */
  const trim: Trim = (r, a) =>
    dropOldAttempts({ MAX_KEPT_ATTEMPTS, countsTowardMaxAttempts, mayHaveTakenEffect }, r, a);
  it.each<Row>([
    {
      name: 'first attempt: in flight, recorded before it is sent, lease over the attempt',
      input: rec(leased),
      act: (r) => startAttempt(r, ME, NOW, 2_000),
      change: {
        state: 'in_flight',
        attempts: [{ n: 1, owner: 'me', startedAt: NOW, sent: 'maybe' }],
        lease: { owner: 'me', until: NOW + 2_000 + ME.leaseMs },
      },
    },
    {
      name: 'numbered after the last one kept',
      input: rec({ ...leased, attempts: [ended503(1), ended503(5)] }),
      act: (r) => startAttempt(r, ME, NOW, 2_000),
      change: {
        state: 'in_flight',
        attempts: [ended503(1), ended503(5), { n: 6, owner: 'me', startedAt: NOW, sent: 'maybe' }],
        lease: { owner: 'me', until: NOW + 2_000 + ME.leaseMs },
      },
    },
    {
      name: 'lease capped at deadline + attempt timeout',
      input: rec({ ...leased, deadlineAt: NOW + 500, policySnapshot: { attemptTimeoutMs: 1_000 } }),
      act: (r) => startAttempt(r, ME, NOW, 1_000),
      change: {
        state: 'in_flight',
        attempts: [{ n: 1, owner: 'me', startedAt: NOW, sent: 'maybe' }],
        lease: { owner: 'me', until: NOW + 1_500 },
      },
    },
    {
      name: 'a full history keeps the first and the latest, and sums up the rest',
      input: rec({ ...leased, attempts: many }),
      act: (r) => startAttempt(r, ME, NOW, 2_000, trim),
      change: {
        state: 'in_flight',
        attempts: [
          ended503(1),
          ...many.slice(2),
          { n: MAX_KEPT_ATTEMPTS + 1, owner: 'me', startedAt: NOW, sent: 'maybe' },
        ],
        // A dropped 503 proved nothing was applied: it does not count toward maxAttempts.
        attemptsOmitted: { count: 1, counted: 0, mayHaveTakenEffect: false, byClass: { retryable: 1 } },
        lease: { owner: 'me', until: NOW + 2_000 + ME.leaseMs },
      },
    },
  ])('$name', (row) => check(row));

  it('refuses to start an attempt of a full history without the trim (a caller bug), changing nothing', () => {
    const full = rec({ ...leased, attempts: many });
    const before = structuredClone(full);
    expect(() => startAttempt(full, ME, NOW, 2_000)).toThrow(/no history trim/);
    expect(full).toStrictEqual(before);
    // One attempt short of full needs none.
    expect(startAttempt(rec({ ...leased, attempts: many.slice(1) }), ME, NOW, 2_000).attempts).toHaveLength(
      MAX_KEPT_ATTEMPTS,
    );
  });
});

describe('endAttempt (the view decide reads)', () => {
  it.each<Row>([
    {
      name: 'closes the last attempt with its class, status and hint',
      input: rec({ state: 'in_flight', attempts: [ended503(1), open(2)] }),
      act: (r) => endAttempt(r, end(RETRYABLE, 1_000)),
      change: {
        attempts: [
          ended503(1),
          {
            ...open(2),
            endedAt: NOW,
            class: 'retryable',
            sent: 'definitely',
            effect: 'none',
            status: 503,
            error: 'status 503',
            hintMs: 1_000,
          },
        ],
      },
    },
    {
      name: 'a completed attempt carries no error',
      input: rec({ state: 'in_flight', attempts: [{ ...open(1), error: 'stale' }] }),
      act: (r) => endAttempt(r, end(COMPLETED)),
      change: {
        attempts: [
          { ...open(1), endedAt: NOW, class: 'completed', sent: 'definitely', effect: 'applied', status: 201 },
        ],
      },
    },
  ])('$name', (row) => check(row));
});

describe('settling transitions', () => {
  const inFlight = rec({
    state: 'in_flight',
    lease: { owner: 'me', until: LATER },
    attempts: [open(1)],
    authRefreshed: true,
  });
  const closed503 = {
    ...open(1),
    endedAt: NOW,
    class: 'retryable',
    sent: 'definitely',
    effect: 'none',
    status: 503,
    error: 'status 503',
  } as const;
  it.each<Row>([
    {
      name: 'succeed: result stored, retained, lease released',
      input: inFlight,
      act: (r) => succeed(r, end(COMPLETED), RESULT, 60_000),
      change: {
        state: 'succeeded',
        result: RESULT,
        retainUntil: NOW + 60_000,
        attempts: [
          { ...open(1), endedAt: NOW, class: 'completed', sent: 'definitely', effect: 'applied', status: 201 },
        ],
      },
      dropped: ['lease'],
    },
    {
      name: 'scheduleRetry (counted): pending, due after the delay, backoff advanced, lease kept over the wait',
      input: rec({ ...inFlight, backoff: { retries: 2, lastDelayMs: 400 } }),
      act: (r) => scheduleRetry(r, end(RETRYABLE), 800, ME, true),
      change: {
        state: 'pending',
        nextAttemptAt: NOW + 800,
        backoff: { retries: 3, lastDelayMs: 800 },
        lease: { owner: 'me', until: NOW + 800 + ME.leaseMs },
        attempts: [{ ...closed503, delayMs: 800 }],
      },
    },
    {
      name: 'scheduleRetry (uncounted, e.g. not sent): the backoff stays',
      input: rec({ ...inFlight, backoff: { retries: 2, lastDelayMs: 400 } }),
      act: (r) => scheduleRetry(r, end(RETRYABLE), 800, ME, false),
      change: {
        state: 'pending',
        nextAttemptAt: NOW + 800,
        lease: { owner: 'me', until: NOW + 800 + ME.leaseMs },
        attempts: [{ ...closed503, delayMs: 800 }],
      },
    },
    {
      name: 'refreshAuth: due at once, marked so it happens only once, backoff untouched',
      input: rec({ state: 'in_flight', lease: { owner: 'me', until: LATER }, attempts: [open(1)] }),
      act: (r) => refreshAuth(r, end(RETRYABLE), ME),
      change: {
        state: 'pending',
        nextAttemptAt: NOW,
        authRefreshed: true,
        lease: { owner: 'me', until: NOW + ME.leaseMs },
        attempts: [{ ...closed503, delayMs: 0 }],
      },
    },
    {
      name: 'settleStopped with an attempt end: failure stored, attempt closed, lease released',
      input: inFlight,
      act: (r) =>
        settleStopped(
          r,
          { ...STOP, state: 'unknown', reason: 'attempts', mayHaveTakenEffect: true, status: 503, class: 'retryable' },
          NOW,
          5_000,
          end(RETRYABLE),
        ),
      change: {
        state: 'unknown',
        failure: {
          reason: 'attempts',
          message: STOP.message,
          remediation: STOP.remediation,
          mayHaveTakenEffect: true,
          status: 503,
          class: 'retryable',
        },
        retainUntil: NOW + 5_000,
        attempts: [closed503],
      },
      dropped: ['lease'],
    },
    {
      name: "settleStopped with the server's last answer: kept as failure.response",
      input: inFlight,
      act: (r) =>
        settleStopped(
          r,
          { ...STOP, reason: 'permanent', status: 402, class: 'permanent' },
          NOW,
          5_000,
          end(RETRYABLE),
          DECLINE,
        ),
      change: {
        state: 'failed',
        failure: {
          reason: 'permanent',
          message: STOP.message,
          remediation: STOP.remediation,
          mayHaveTakenEffect: false,
          status: 402,
          class: 'permanent',
          response: DECLINE,
        },
        retainUntil: NOW + 5_000,
        attempts: [closed503],
      },
      dropped: ['lease'],
    },
    {
      name: 'settleStopped before any attempt: attempts as they were, no status or class',
      input: rec({ lease: { owner: 'me', until: LATER }, attempts: [ended503(1)] }),
      act: (r) => settleStopped(r, { ...STOP, reason: 'deadline' }, NOW, 0),
      change: {
        state: 'failed',
        failure: {
          reason: 'deadline',
          message: STOP.message,
          remediation: STOP.remediation,
          mayHaveTakenEffect: false,
        },
        retainUntil: NOW,
      },
      dropped: ['lease'],
    },
    {
      name: 'release: pending, unleased, same epoch',
      input: inFlight,
      act: release,
      change: { state: 'pending' },
      dropped: ['lease'],
    },
  ])('$name', (row) => check(row));
});

describe('reopen (retry of a blocked or unknown operation)', () => {
  const stopped = {
    failure: { reason: 'correctable', message: 'bad card', remediation: 'fix it', mayHaveTakenEffect: true },
    retainUntil: NOW + 1_000,
    authRefreshed: true,
    attempts: [ended503(1), ended503(2)],
    backoff: { retries: 4, lastDelayMs: 9_000 },
    nextAttemptAt: 95_000,
  } satisfies Partial<OperationRecord>;
  it.each<Row>([
    {
      name: 'blocked: pending now, new deadline, fresh backoff; failure, retention and auth refresh forgotten; attempts kept',
      input: rec({ ...stopped, state: 'blocked' }),
      act: (r) => reopen(r, NOW, NOW + 30_000),
      change: {
        state: 'pending',
        nextAttemptAt: NOW,
        deadlineAt: NOW + 30_000,
        backoff: { retries: 0, lastDelayMs: 0 },
      },
      dropped: ['failure', 'retainUntil', 'authRefreshed'],
    },
    {
      name: 'unknown, without the optional fields: nothing else changes',
      input: rec({ state: 'unknown', attempts: [ended503(1)] }),
      act: (r) => reopen(r, NOW, NOW + 1),
      change: { state: 'pending', nextAttemptAt: NOW, deadlineAt: NOW + 1 },
    },
  ])('$name', (row) => check(row));
});

describe('fenceForeign', () => {
  it.each<Row>([
    {
      name: "another owner's live lease on a pending record: dropped, epoch bumped",
      input: rec({ lease: { owner: 'them', until: LATER } }),
      act: (r) => fenceForeign(r, 'me'),
      change: { epoch: 4 },
      dropped: ['lease'],
    },
    {
      name: 'in flight elsewhere: fenced too (the open attempt is closed by the next claim)',
      input: rec({ state: 'in_flight', lease: { owner: 'them', until: LATER }, attempts: [open(1, 'them')] }),
      act: (r) => fenceForeign(r, 'me'),
      change: { epoch: 4 },
      dropped: ['lease'],
    },
    {
      name: 'our own lease: left alone',
      input: rec({ lease: { owner: 'me', until: LATER } }),
      act: (r) => fenceForeign(r, 'me'),
      same: true,
    },
    { name: 'unleased: left alone', input: rec(), act: (r) => fenceForeign(r, 'me'), same: true },
    {
      name: 'terminal, even with a stale lease: left alone',
      input: rec({ state: 'succeeded', lease: { owner: 'them', until: LATER } }),
      act: (r) => fenceForeign(r, 'me'),
      same: true,
    },
  ])('$name', (row) => check(row));
});

describe('abandon (clear)', () => {
  it.each<Row>([
    {
      name: 'pending: settled by the stop, not retained, fenced, lease released',
      input: rec({ lease: { owner: 'them', until: LATER }, attempts: [ended503(1)] }),
      act: (r) => abandon(r, STOP, NOW),
      change: {
        state: 'failed',
        epoch: 4,
        failure: { reason: 'aborted', message: STOP.message, remediation: STOP.remediation, mayHaveTakenEffect: false },
        retainUntil: NOW,
      },
      dropped: ['lease'],
    },
    {
      name: 'in flight: left to its owner',
      input: rec({ state: 'in_flight', lease: { owner: 'them', until: LATER }, attempts: [open(1, 'them')] }),
      act: (r) => abandon(r, STOP, NOW),
      same: true,
    },
    {
      name: 'already settled: left alone',
      input: rec({ state: 'blocked' }),
      act: (r) => abandon(r, STOP, NOW),
      same: true,
    },
  ])('$name', (row) => check(row));
});
