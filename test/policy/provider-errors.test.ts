import { describe, expect, it } from 'vitest';
import { OperationError } from '../../src/errors.js';
import { classify } from '../../src/flow/decide/classify.js';
import { defineProfile, ietfProfile, stripeProfile } from '../../src/policy/profiles.js';
import {
  bodyOf,
  errorResponseOf,
  problemDetailsOf,
  providerErrorOf,
  stripeErrorOf,
} from '../../src/policy/provider-errors.js';

// As Stripe sends a card decline (https://docs.stripe.com/declines/codes), ids shortened.
const STRIPE_DECLINE = JSON.stringify({
  error: {
    charge: 'ch_3PZ0example',
    code: 'card_declined',
    decline_code: 'insufficient_funds',
    doc_url: 'https://stripe.com/docs/error-codes/card-declined',
    message: 'Your card has insufficient funds.',
    param: '',
    request_log_url: 'https://dashboard.stripe.com/test/logs/req_example',
    type: 'card_error',
  },
});

// RFC 9457 §3's example, with an extension member.
const PROBLEM = JSON.stringify({
  type: 'https://example.com/probs/out-of-credit',
  title: 'You do not have enough credit.',
  detail: 'Your current balance is 30, but that costs 50.',
  instance: '/account/12345/msgs/abc',
  status: 403,
  balance: 30,
});

describe('the final answer as OperationError.response', () => {
  it('parses a JSON body and keeps the headers given', () => {
    const response = errorResponseOf({
      status: 402,
      headers: { 'content-type': 'application/json', 'request-id': 'req_1' },
      body: { encoding: 'json', text: STRIPE_DECLINE },
    });
    expect(response.status).toBe(402);
    expect(response.headers).toEqual({ 'content-type': 'application/json', 'request-id': 'req_1' });
    expect(response.body).toMatchObject({ error: { decline_code: 'insufficient_funds' } });
    expect(response.problem).toBeUndefined();
  });

  it('reads RFC 9457 members from application/problem+json, extensions stay in the body', () => {
    const response = errorResponseOf({
      status: 403,
      headers: { 'content-type': 'application/problem+json; charset=utf-8' },
      body: { encoding: 'json', text: PROBLEM },
    });
    expect(response.problem).toEqual({
      type: 'https://example.com/probs/out-of-credit',
      title: 'You do not have enough credit.',
      detail: 'Your current balance is 30, but that costs 50.',
      instance: '/account/12345/msgs/abc',
      status: 403,
    });
    expect((response.body as { balance: number }).balance).toBe(30);
  });

  it('keeps text as text and leaves binary and empty bodies out', () => {
    expect(bodyOf({ encoding: 'text', text: '<html>Bad gateway</html>' })).toBe('<html>Bad gateway</html>');
    expect(bodyOf({ encoding: 'base64', data: 'AAEC' })).toBeUndefined();
    expect(bodyOf(undefined)).toBeUndefined();
    expect(errorResponseOf({ status: 500, headers: {} }).body).toBeUndefined();
  });
});

describe('problem details (RFC 9457)', () => {
  it('ignores members of the wrong type and defaults type to about:blank', () => {
    expect(problemDetailsOf({ title: 42, status: '403', detail: 'no' })).toEqual({ type: 'about:blank', detail: 'no' });
  });

  it('is undefined for a body that is not an object', () => {
    expect(problemDetailsOf('Forbidden')).toBeUndefined();
    expect(problemDetailsOf([1])).toBeUndefined();
  });
});

describe('providerError through the profile', () => {
  it('stripe: code, decline code, type, message and no empty param', () => {
    const response = errorResponseOf({
      status: 402,
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: STRIPE_DECLINE },
    });
    expect(providerErrorOf(stripeProfile, response)).toEqual({
      profile: 'stripe',
      code: 'card_declined',
      declineCode: 'insufficient_funds',
      type: 'card_error',
      message: 'Your card has insufficient funds.',
    });
  });

  it('stripe: a body that is not a Stripe error gives none', () => {
    expect(stripeErrorOf('<html>502</html>')).toBeUndefined();
    expect(stripeErrorOf({ error: 'nope' })).toBeUndefined();
    expect(stripeErrorOf({ error: {} })).toBeUndefined();
  });

  it('ietf: problem details become the provider error', () => {
    const response = errorResponseOf({
      status: 403,
      headers: { 'content-type': 'application/problem+json' },
      body: { encoding: 'json', text: PROBLEM },
    });
    expect(providerErrorOf(ietfProfile, response)).toEqual({
      profile: 'ietf',
      code: 'https://example.com/probs/out-of-credit',
      type: 'You do not have enough credit.',
      message: 'Your current balance is 30, but that costs 50.',
    });
  });

  it('ietf: plain JSON without problem+json gives none (no guessing)', () => {
    const response = errorResponseOf({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: PROBLEM },
    });
    expect(providerErrorOf(ietfProfile, response)).toBeUndefined();
  });

  it('a custom profile reads its own format with errorOf; a throwing hook falls back', () => {
    const acme = defineProfile({
      name: 'acme',
      errorOf: (body, status) => ({ code: (body as { errorCode: string }).errorCode, message: `HTTP ${status}` }),
    });
    const response = errorResponseOf({
      status: 409,
      headers: {},
      body: { encoding: 'json', text: '{"errorCode":"DUPLICATE"}' },
    });
    expect(providerErrorOf(acme, response)).toEqual({ profile: 'acme', code: 'DUPLICATE', message: 'HTTP 409' });
    const broken = defineProfile({
      name: 'broken',
      errorOf: () => {
        throw new Error('reader bug');
      },
    });
    expect(providerErrorOf(broken, response)).toBeUndefined();
  });

  it('OperationError carries response and providerError', () => {
    const response = errorResponseOf({
      status: 402,
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: STRIPE_DECLINE },
    });
    const error = new OperationError('declined', {
      key: 'k1',
      state: 'failed',
      status: 402,
      remediation: 'Ask for another card.',
      response,
      providerError: providerErrorOf(stripeProfile, response),
    });
    expect(error.response?.status).toBe(402);
    expect(error.providerError?.declineCode).toBe('insufficient_funds');
  });
});

describe('stripe 402: a decline is a definite, not-applied refusal', () => {
  const decline = {
    kind: 'response' as const,
    status: 402,
    header: (name: string) => (name.toLowerCase() === 'content-type' ? 'application/json' : null),
    text: STRIPE_DECLINE,
  };

  it('is permanent (retry(key) would replay it) and not applied: it ends failed, never unknown', () => {
    const c = classify(decline, { profile: stripeProfile, overrides: {}, otherStatus: 'permanent' });
    expect(c).toMatchObject({ class: 'permanent', sent: 'definitely', effect: 'none', status: 402 });
  });

  it('is a profile rule: an endpoint otherStatus of retryable does not make a decline retried', () => {
    const stripe = classify(decline, { profile: stripeProfile, overrides: {}, otherStatus: 'retryable' });
    expect(stripe.class).toBe('permanent');
    // Without the rule (ietf names no 402) the endpoint default applies.
    const ietf = classify(decline, { profile: ietfProfile, overrides: {}, otherStatus: 'retryable' });
    expect(ietf.class).toBe('retryable');
  });
});
