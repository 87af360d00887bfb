import { describe, expect, it } from 'vitest';
import { createClient, InvalidOptionsError, ietfProfile, memoryStore } from '../src/index.js';
import { checkClientOptionKeys } from '../src/options.js';

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
    ['typo', { policy: { deadlineMS: 5 } as never }, 'policy.deadlineMS'],
    ['nested typo', { policy: { backoff: { baseDelay: 5 } } as never }, 'policy.backoff.baseDelay'],
    ['endpoint rule typo', { endpoints: { '/x': { retry: 3 } as never } }, 'endpoints["/x"].retry'],
    ['pattern that never matches', { endpoints: { 'ANY /x': {} } }, 'endpoints["ANY /x"]'],
    ['pattern with a query', { endpoints: { 'GET /s?q=1': {} } }, 'endpoints["GET /s?q=1"]'],
    ['bad ratio', { policy: { budget: { ratio: 2 } } }, 'policy.budget.ratio'],
    // Infinity is no JSON: the stored policy copy would hold null, and the gate would open at the first retry.
    ['infinite budget capacity', { policy: { budget: { capacity: Infinity } } }, 'policy.budget.capacity'],
    [
      'infinite endpoint budget capacity',
      { endpoints: { 'POST /payments': { budget: { capacity: Number.POSITIVE_INFINITY } } } },
      'endpoints["POST /payments"].budget.capacity',
    ],
    ['infinite lease', { leaseMs: Infinity }, 'leaseMs'],
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

  it('a number that is not finite is refused as such, naming the field', () => {
    expect(() => createClient({ policy: { budget: { capacity: Infinity } } })).toThrow(
      /`policy\.budget\.capacity`: must be a finite number$/,
    );
    expect(() => createClient({ policy: { budget: { ratio: Number.NaN } } })).toThrow(
      /`policy\.budget\.ratio`: expected a number$/,
    );
  });

  it('valid options construct', async () => {
    let client: ReturnType<typeof createClient> | undefined;
    expect(() => {
      client = createClient({
        baseUrl: 'https://api.example.test',
        policy: { maxAttempts: 8, backoff: { jitter: 'decorrelated' }, budget: false },
        endpoints: {
          'POST /payments': { profile: 'stripe', deadlineMs: 600_000 },
          'GET /catalog/**': { sendKey: false },
        },
      });
    }).not.toThrow();
    // Closed, which waits for the engine the client started loading when it was made: a load still running
    // when this file's environment is torn down fails whatever test runs then (seen once under Node 22).
    await client?.close();
  });
});

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidOptionsError) return error.message;
    throw error;
  }
  throw new Error('did not throw');
}

describe('unknown top-level client options (checkClientOptionKeys)', () => {
  const KNOWN = ['baseUrl', 'store', 'policy', 'endpoints', 'concurrency', 'leaseMs'];

  it.each([
    ['prefixUrl', /`prefixUrl`: unknown option: use `baseUrl`/],
    ['timeout', /`timeout`: unknown option: use `policy\.attemptTimeoutMs` \(one attempt\) or `policy\.deadlineMs`/],
    ['retry', /`retry`: unknown option: use `policy\.maxAttempts`.*`endpoints`/],
    ['hooks', /`hooks`: unknown option: use `headers`.*client\.on\(event, fn\)/],
    ['throwHttpErrors', /`throwHttpErrors`: unknown option: there is no switch: a final non-2xx rejects `send`/],
    ['baseURL', /`baseURL`: unknown option: did you mean `baseUrl`\?/],
    ['concurency', /`concurency`: unknown option: did you mean `concurrency`\?/],
  ])('refuses %s, suggesting the oncely name', (key, message) => {
    const error = (() => {
      try {
        checkClientOptionKeys({ [key]: 1 }, KNOWN);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).field).toBe(key);
    expect((error as InvalidOptionsError).message).toMatch(message);
    expect((error as InvalidOptionsError).message).toContain(
      'Accepted: baseUrl, store, policy, endpoints, concurrency, leaseMs',
    );
  });

  it('a name far from every accepted one gets the accepted list, no guess', () => {
    const message = messageOf(() => checkClientOptionKeys({ zzz: 1 }, KNOWN));
    expect(message).toBe(
      'Invalid option `zzz`: unknown option. Accepted: baseUrl, store, policy, endpoints, concurrency, leaseMs',
    );
  });

  it('accepts known keys (with undefined values too) and prefixes the field', () => {
    expect(() => checkClientOptionKeys({ baseUrl: 'https://a.test', store: undefined }, KNOWN)).not.toThrow();
    expect(() => checkClientOptionKeys(undefined, KNOWN)).not.toThrow();
    expect(fieldOf(() => checkClientOptionKeys({ prefixUrl: 'x' }, KNOWN, 'options'))).toBe('options.prefixUrl');
  });

  it('an own hint only: inherited names such as toString are unknown keys, not hints', () => {
    const message = messageOf(() => checkClientOptionKeys({ toString: 1 }, KNOWN));
    expect(message).toMatch(/^Invalid option `toString`: unknown option\. Accepted/);
  });
});

describe('validation messages name the field and the accepted forms', () => {
  it.each<[string, Parameters<typeof createClient>[0], RegExp]>([
    [
      'policy typo',
      { policy: { deadlineMS: 5 } as never },
      /`policy\.deadlineMS`: unknown option: did you mean `deadlineMs`\?/,
    ],
    [
      'ky timeout in a policy',
      { policy: { timeout: 5 } as never },
      /`policy\.timeout`: unknown option: use `attemptTimeoutMs`/,
    ],
    [
      'ky retry in a rule',
      { endpoints: { '/x': { retry: 2 } as never } },
      /`endpoints\["\/x"\]\.retry`: unknown option: use `maxAttempts`/,
    ],
    [
      'nested typo',
      { policy: { backoff: { baseDelay: 5 } } as never },
      /did you mean `baseDelayMs`\?.*Accepted: baseDelayMs, maxDelayMs/,
    ],
    ['budget union', { policy: { budget: 'yes' as never } }, /`policy\.budget`: expected false or an object$/],
    ['budget field', { policy: { budget: { ratio: 2 } } }, /`policy\.budget\.ratio`: must be <= 1$/],
    [
      'profile union',
      { policy: { profile: 'paypal' as 'ietf' } },
      /`policy\.profile`: expected "ietf" or "stripe" or an object$/,
    ],
    ['profile object', { policy: { profile: {} as never } }, /`policy\.profile\.name`: expected a string$/],
    [
      'status key',
      { policy: { classify: { '4xx': 'permanent' } as never } },
      /`policy\.classify\.4xx`: not an accepted key \(must be an HTTP status code from 100 to 599\)/,
    ],
    [
      'class value',
      { policy: { classify: { 409: 'maybe' as 'permanent' } } },
      /`policy\.classify\.409`: expected one of "completed"/,
    ],
    ['base url', { baseUrl: 'not a url' }, /`baseUrl`: must be an absolute URL, e.g\. "https:\/\/api\.example\.com"/],
    [
      'profile hook not a function',
      { policy: { profile: { ...ietfProfile, errorOf: 'code' as never } } },
      /`policy\.profile\.errorOf`: must be a function$/,
    ],
    [
      'profile error format',
      { policy: { profile: { ...ietfProfile, errorFormat: 'xml' as never } } },
      /`policy\.profile\.errorFormat`: expected one of "stripe", "problem-details"$/,
    ],
    ['policy not an object', { policy: 5 as never }, /`policy`: expected an object of policy options \(maxAttempts, /],
    [
      'ANY method',
      { endpoints: { 'ANY /x': {} } },
      /`endpoints\["ANY \/x"\]`: pattern "ANY \/x" names "ANY", which is not a method.*accepted forms: 'METHOD \/path' or '\/path'/,
    ],
  ])('%s', (_name, options, message) => {
    const text = messageOf(() => createClient(options));
    expect(text).toMatch(message);
    expect(text).not.toMatch(/Invalid input|does not match any allowed form/);
  });
});
