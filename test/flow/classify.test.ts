import { describe, expect, it } from 'vitest';
import { type ClassifyRules, classify, type Observation } from '../../src/flow/classify.js';
import type { AttemptClass } from '../../src/flow/record.js';
import { ietfProfile, stripeProfile } from '../../src/policy/profiles.js';

const ietf: ClassifyRules = { profile: ietfProfile, overrides: {}, otherStatus: 'permanent' };
const stripe: ClassifyRules = { profile: stripeProfile, overrides: {}, otherStatus: 'permanent' };

function response(status: number, body = '', headers: Record<string, string> = {}): Observation {
  return { kind: 'response', status, text: body, header: (name) => headers[name.toLowerCase()] ?? null };
}

describe('classify: the design table (ietf profile)', () => {
  it.each<[number, AttemptClass, string]>([
    [200, 'completed', 'applied'],
    [201, 'completed', 'applied'],
    [204, 'completed', 'applied'],
    [408, 'retryable', 'none'],
    [425, 'retryable', 'none'],
    [429, 'retryable', 'none'],
    [503, 'retryable', 'none'],
    [500, 'retryable', 'unknown'],
    [502, 'retryable', 'unknown'],
    [504, 'retryable', 'unknown'],
    [409, 'in_progress', 'unknown'],
    [400, 'correctable', 'none'],
    [401, 'correctable', 'none'],
    [403, 'correctable', 'none'],
    [404, 'correctable', 'none'],
    [405, 'correctable', 'none'],
    [410, 'correctable', 'none'],
    [413, 'correctable', 'none'],
    [415, 'correctable', 'none'],
    [422, 'correctable', 'none'],
    [418, 'permanent', 'none'],
    [501, 'permanent', 'unknown'],
    [302, 'permanent', 'none'],
  ])('%d → %s (effect %s)', (status, cls, effect) => {
    const c = classify(response(status), ietf);
    expect(c.class).toBe(cls);
    expect(c.effect).toBe(effect);
    expect(c.sent).toBe('definitely');
    expect(c.status).toBe(status);
  });

  it('422 that speaks of idempotency is an integrity failure, not a validation error', () => {
    const body = JSON.stringify({ title: 'Idempotency-Key reused with a different payload' });
    expect(classify(response(422, body), ietf).class).toBe('permanent');
  });

  it('endpoint overrides win over the profile; unknown statuses follow otherStatus', () => {
    const rules: ClassifyRules = {
      ...ietf,
      overrides: { 409: 'permanent', 503: 'correctable' },
      otherStatus: 'retryable',
    };
    expect(classify(response(409), rules).class).toBe('permanent');
    expect(classify(response(503), rules).class).toBe('correctable');
    expect(classify(response(418), rules).class).toBe('retryable');
  });
});

describe('classify: without an answer', () => {
  it('a refused connection or DNS failure was never sent', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']) {
      const c = classify({ kind: 'transport_error', sent: 'not', code, message: code }, ietf);
      expect(c).toMatchObject({ class: 'not_sent', sent: 'not', effect: 'none' });
    }
  });

  it('a reset or timeout after sending is ambiguous', () => {
    expect(
      classify({ kind: 'transport_error', sent: 'maybe', code: 'ECONNRESET', message: 'reset' }, ietf),
    ).toMatchObject({ class: 'ambiguous', sent: 'maybe', effect: 'unknown' });
    expect(classify({ kind: 'timeout', afterMs: 5_000 }, ietf)).toMatchObject({
      class: 'ambiguous',
      effect: 'unknown',
    });
  });

  it('an abort before sending is not sent; during the request it is ambiguous', () => {
    expect(classify({ kind: 'aborted', sent: 'not' }, ietf).class).toBe('not_sent');
    expect(classify({ kind: 'aborted', sent: 'maybe' }, ietf).class).toBe('ambiguous');
  });
});

describe('classify: stripe profile', () => {
  it('409 idempotency_key_in_use is in progress; another 409 is a permanent conflict', () => {
    const inUse = JSON.stringify({ error: { type: 'idempotency_error', code: 'idempotency_key_in_use' } });
    expect(classify(response(409, inUse), stripe).class).toBe('in_progress');
    expect(classify(response(409, '{"error":{"type":"invalid_request_error"}}'), stripe).class).toBe('permanent');
  });

  it('400 idempotency_error is a key reused with other parameters (permanent)', () => {
    const body = JSON.stringify({ error: { type: 'idempotency_error', message: 'Keys for idempotent requests...' } });
    expect(classify(response(400, body), stripe).class).toBe('permanent');
    expect(classify(response(400, '{"error":{"type":"card_error"}}'), stripe).class).toBe('correctable');
  });

  it('Stripe-Should-Retry overrides the status reading', () => {
    expect(classify(response(400, '', { 'stripe-should-retry': 'true' }), stripe).class).toBe('retryable');
    expect(classify(response(503, '', { 'stripe-should-retry': 'false' }), stripe).class).toBe('permanent');
    expect(classify(response(200, '', { 'stripe-should-retry': 'false' }), stripe).class).toBe('completed');
  });
});
