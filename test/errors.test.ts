import { describe, expect, it } from 'vitest';
import {
  CorruptRecordError,
  DEFAULT_REMEDIATION,
  hasErrorCode,
  InvalidOptionsError,
  InvalidRequestError,
  InvalidStateError,
  KeyConflictError,
  LeaseLostError,
  NotFoundError,
  OncelyError,
  type OncelyErrorCode,
  OperationError,
  ResponseValidationError,
} from '../src/errors.js';
import type { AttemptSummary } from '../src/model.js';
import { LockTimeoutError } from '../src/store/file/lock-timeout.js';
import { OwnedStoreError } from '../src/store/file/owner.js';

const attempt = (n: number): AttemptSummary => ({
  n,
  owner: 'o1',
  startedAt: n * 1000,
  endedAt: n * 1000 + 5,
  class: 'retryable',
  status: 503,
  sent: 'definitely',
  effect: 'none',
});

describe('every OncelyError carries a remediation', () => {
  const errors: OncelyError[] = [
    new InvalidOptionsError('policy.maxAttempts', 'must be >= 1'),
    new InvalidRequestError('url', 'must be a string'),
    new KeyConflictError('k1', 'pending'),
    new OperationError('failed', { key: 'k1', state: 'failed', remediation: 'Send it again as a new operation.' }),
    new ResponseValidationError('k1', 200, { id: 1 }, ['id: expected string'], [attempt(1)]),
    new LeaseLostError('k1'),
    new NotFoundError('k1'),
    new InvalidStateError('k1', 'in_flight', 'in flight'),
    new CorruptRecordError('k1', 'bad json'),
  ];

  it.each(errors.map((e) => [e.name, e] as const))('%s has a non-empty remediation', (_name, error) => {
    expect(typeof error.remediation).toBe('string');
    expect(error.remediation.length).toBeGreaterThan(20);
  });

  it('a default per code, one for every code raised', () => {
    for (const error of errors) {
      if (error instanceof OperationError) continue; // its raiser always gives a specific one
      expect(error.remediation).toBe(DEFAULT_REMEDIATION[error.code as keyof typeof DEFAULT_REMEDIATION]);
    }
  });

  it("the file store's own codes carry their own next step (none in the shared table)", () => {
    const lock = new LockTimeoutError('/data/ops/k1.claim', 5000, 'pid 42');
    const owned = new OwnedStoreError('/data/ops', 'pid 42');
    const journaled = new OwnedStoreError('/data/ops', 'pid 42', true);
    expect(lock.remediation).toBe('Nothing was written: try again, or raise `lockTimeoutMs`.');
    expect(owned.remediation).toBe(
      'Nothing was read or written: another process owns this file store (`exclusive: true`).',
    );
    expect(journaled.remediation).toMatch(/never send it again under a new key/);
    expect(Object.keys(DEFAULT_REMEDIATION)).not.toContain('lock_timeout');
    expect(Object.keys(DEFAULT_REMEDIATION)).not.toContain('store_owned');
  });

  it('the one given wins over the default, and a code without a default gets the generic one', () => {
    expect(new OperationError('x', { remediation: 'Call retry(key).' }).remediation).toBe('Call retry(key).');
    const unknownCode = new OncelyError('future_code' as OncelyErrorCode, 'x');
    expect(unknownCode.remediation).toMatch(/inspect it with get\(key\)/);
  });
});

describe('attempts is a count, history the list', () => {
  it('an OperationError counts its history', () => {
    const history = [attempt(1), attempt(2), attempt(3)];
    const error = new OperationError('stopped', { key: 'k', state: 'failed', remediation: 'r', history });
    expect(error.attempts).toBe(3);
    expect(error.history).toEqual(history);
  });

  it('the former detail name (a list under `attempts`) still fills history', () => {
    const error = new OperationError('stopped', { remediation: 'r', attempts: [attempt(1)] });
    expect(error.attempts).toBe(1);
    expect(error.history.map((a) => a.n)).toEqual([1]);
  });

  it('tries that never left are notSent, not attempts (the dropped ones of a long history too)', () => {
    const history = [{ ...attempt(1), sent: 'not' as const }, { ...attempt(2), sent: 'not' as const }, attempt(3)];
    const omitted = { count: 5, counted: 0, mayHaveTakenEffect: false, byClass: { not_sent: 4, retryable: 1 } };
    const error = new OperationError('stopped', { remediation: 'r', history, omitted });
    expect(error).toMatchObject({ attempts: 2, notSent: 6 });
  });

  it('no history is zero attempts', () => {
    expect(new NotFoundError('k').attempts).toBe(0);
    expect(new NotFoundError('k').history).toEqual([]);
  });
});

describe('ResponseValidationError exposes the raw result', () => {
  it('status, kept headers and the body as the server sent it', () => {
    const body = { id: 42 };
    const error = new ResponseValidationError('k', 201, body, ['id: expected string'], [attempt(1)], {
      'content-type': 'application/json',
      location: '/payments/42',
    });
    expect(error.result).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json', location: '/payments/42' },
      body: { id: 42 },
    });
    expect(error.state).toBe('succeeded');
    expect(error.attempts).toBe(1);
    expect(error.remediation).toMatch(/do not send it again/);
  });
});

describe('hasErrorCode narrows to the class of the code', () => {
  it('operation_failed gives providerError and response without instanceof', () => {
    const thrown: unknown = new OperationError('declined', {
      remediation: 'Ask for another card.',
      status: 402,
      response: { status: 402, headers: {}, body: { error: { code: 'card_declined' } } },
      providerError: { profile: 'stripe', code: 'card_declined', declineCode: 'insufficient_funds' },
    });
    if (!hasErrorCode(thrown, 'operation_failed')) throw new Error('expected operation_failed');
    // These property reads type-check only because the guard narrowed to OperationError.
    expect(thrown.providerError?.declineCode).toBe('insufficient_funds');
    expect(thrown.response?.status).toBe(402);
    expect(hasErrorCode(thrown, 'not_found')).toBe(false);
    expect(hasErrorCode(new Error('plain'), 'operation_failed')).toBe(false);
  });
});
