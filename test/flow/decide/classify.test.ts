import { describe, expect, it } from 'vitest';
import { type ClassifyRules, classify, type Observation } from '../../../src/flow/decide/classify.js';
import type { AttemptClass } from '../../../src/model.js';
import { ietfProfile, stripeProfile } from '../../../src/policy/profiles.js';

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
    [302, 'permanent', 'unknown'],
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
    // The provider holds another request under the key, which may have done what this one asks.
    expect(classify(response(422, body), ietf).effect).toBe('unknown');
    expect(classify(response(422, '{"title":"amount must be positive"}'), ietf).effect).toBe('none');
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
    expect(classify(response(400, body), stripe).effect).toBe('unknown');
    expect(classify(response(400, '{"error":{"type":"card_error"}}'), stripe).class).toBe('correctable');
    expect(classify(response(400, '{"error":{"type":"card_error"}}'), stripe).effect).toBe('none');
  });

  it('Stripe-Should-Retry overrides the status reading', () => {
    expect(classify(response(400, '', { 'stripe-should-retry': 'true' }), stripe).class).toBe('retryable');
    expect(classify(response(503, '', { 'stripe-should-retry': 'false' }), stripe).class).toBe('permanent');
    expect(classify(response(200, '', { 'stripe-should-retry': 'false' }), stripe).class).toBe('completed');
  });
});

describe('classify: redirects are final, their effect unknown', () => {
  it.each([300, 301, 302, 303, 304, 307, 308])(
    '%d is permanent with an unknown effect, the Location in the detail',
    (status) => {
      const c = classify(response(status, '', { location: 'https://elsewhere.test/x' }), ietf);
      expect(c).toMatchObject({ class: 'permanent', sent: 'definitely', effect: 'unknown', status });
      expect(c.detail).toContain('https://elsewhere.test/x');
      expect(c.detail).toMatch(/not followed/);
    },
  );

  it('endpoint overrides and otherStatus do not make a redirect retryable', () => {
    const rules: ClassifyRules = { ...ietf, overrides: { 302: 'retryable' }, otherStatus: 'retryable' };
    expect(classify(response(302), rules)).toMatchObject({ class: 'permanent', effect: 'unknown' });
  });

  it("a browser's opaque redirect (no status, no Location) and a followed one", () => {
    const opaque = classify({ kind: 'redirect', status: undefined, location: undefined }, ietf);
    expect(opaque).toMatchObject({ class: 'permanent', sent: 'definitely', effect: 'unknown' });
    expect(opaque.status).toBeUndefined();
    const followed = classify(
      { kind: 'redirect', status: undefined, location: 'https://b.test/', followed: true },
      ietf,
    );
    expect(followed.detail).toMatch(/followed by the fetch in use/);
  });
});

describe('classify: a replayed error is final for its key', () => {
  it.each<[number, string]>([
    [503, 'none'],
    [429, 'none'],
    [408, 'none'],
    [500, 'unknown'],
    [502, 'unknown'],
    [504, 'unknown'],
  ])('replayed %d → permanent (effect %s)', (status, effect) => {
    const c = classify(response(status, '', { 'idempotent-replayed': 'true' }), ietf);
    expect(c).toMatchObject({ class: 'permanent', effect, status });
    expect(c.detail).toMatch(/replayed \(Idempotent-Replayed: true\)/);
  });

  it("the profile's marker counts; a replayed refusal or success keeps its class", () => {
    const acme: ClassifyRules = { ...ietf, profile: { ...ietfProfile, replayedHeader: 'X-Replay' } };
    expect(classify(response(503, '', { 'x-replay': 'TRUE' }), acme).class).toBe('permanent');
    expect(classify(response(503, '', { 'idempotent-replayed': 'false' }), ietf).class).toBe('retryable');
    expect(classify(response(400, '', { 'idempotent-replayed': 'true' }), ietf).class).toBe('correctable');
    expect(classify(response(201, '', { 'idempotent-replayed': 'true' }), ietf).class).toBe('completed');
  });

  it('wins over a header rule asking for a retry', () => {
    const c = classify(response(500, '', { 'idempotent-replayed': 'true', 'stripe-should-retry': 'true' }), stripe);
    expect(c).toMatchObject({ class: 'permanent', effect: 'unknown' });
  });
});

describe('classify: a body over maxResponseBytes', () => {
  it('a 2xx is still completed; the detail says the body was not kept', () => {
    const observation: Observation = {
      ...(response(201) as Extract<Observation, { kind: 'response' }>),
      bodyTruncatedAtBytes: 1024,
    };
    const c = classify(observation, ietf);
    expect(c).toMatchObject({ class: 'completed', effect: 'applied' });
    expect(c.detail).toMatch(/maxResponseBytes \(1024\), not kept/);
  });
});
