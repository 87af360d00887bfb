import { describe, expect, it } from 'vitest';
import { createClient, InvalidOptionsError, memoryStore } from '../src/index.js';

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidOptionsError) return error.field;
    throw error;
  }
  return undefined;
}

describe('options are validated at construction, naming the field', () => {
  it.each<[string, Parameters<typeof createClient>[0], string]>([
    ['negative attempts', { policy: { maxAttempts: 0 } }, 'policy.maxAttempts'],
    ['fractional attempts', { policy: { maxAttempts: 1.5 } }, 'policy.maxAttempts'],
    ['zero timeout', { policy: { attemptTimeoutMs: 0 } }, 'policy.attemptTimeoutMs'],
    ['bad jitter', { policy: { backoff: { jitter: 'wild' as 'full' } } }, 'policy.backoff.jitter'],
    ['cap below base', { policy: { backoff: { baseDelayMs: 500, maxDelayMs: 100 } } }, 'policy.backoff.maxDelayMs'],
    ['typo', { policy: { deadlineMS: 5 } as never }, 'policy'],
    ['bad ratio', { policy: { budget: { ratio: 2 } } }, 'policy.budget.ratio'],
    ['bad profile', { policy: { profile: 'paypal' as 'ietf' } }, 'policy.profile'],
    ['bad class', { policy: { classify: { 409: 'maybe' as 'permanent' } } }, 'policy.classify.409'],
    [
      'endpoint field',
      { endpoints: { 'POST /payments': { deadlineMs: -1 } } },
      'endpoints["POST /payments"].deadlineMs',
    ],
    ['endpoint pattern', { endpoints: { payments: {} } }, 'endpoints["payments"]'],
    ['base url', { baseUrl: 'not a url' }, 'baseUrl'],
    ['lease', { leaseMs: 0 }, 'leaseMs'],
    ['headers', { headers: 'Bearer x' as never }, 'headers'],
    ['store', { store: { ...memoryStore(), update: undefined } as never }, 'store.update'],
  ])('%s', (_name, options, field) => {
    expect(fieldOf(() => createClient(options))).toBe(field);
  });

  it('the message names the field too', () => {
    expect(() => createClient({ policy: { maxAttempts: -3 } })).toThrow(/policy\.maxAttempts.*>= 1/);
  });

  it('valid options construct', () => {
    expect(() =>
      createClient({
        baseUrl: 'https://api.example.test',
        policy: { maxAttempts: 8, backoff: { jitter: 'decorrelated' }, budget: false },
        endpoints: {
          'POST /payments': { profile: 'stripe', deadlineMs: 600_000 },
          'GET /catalog/**': { sendKey: false },
        },
      }),
    ).not.toThrow();
  });
});
