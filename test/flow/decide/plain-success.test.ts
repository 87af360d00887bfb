/**
 * The loop tells a plain 2xx without loading next-step.ts (plain-success.ts).
 * Whatever it calls `completed` must be exactly what `classify` says, and it
 * must leave to next-step.ts every answer that needs more: a status outside
 * 2xx, an endpoint override for the status, a hint header the record keeps.
 */
import { describe, expect, it } from 'vitest';
import { type ClassifyRules, classify, type Observation } from '../../../src/flow/decide/classify.js';
import { plainSuccess } from '../../../src/flow/decide/plain-success.js';
import { ietfProfile, stripeProfile } from '../../../src/policy/profiles.js';
import { parseServerHintMs } from '../../../src/policy/retry-after.js';

function response(status: number, headers: Record<string, string> = {}, truncatedAt?: number): Observation {
  const observation: Observation = {
    kind: 'response',
    status,
    text: '{"error":{"code":"idempotency_key_in_use"}}',
    header: (name) => headers[name.toLowerCase()] ?? null,
  };
  if (truncatedAt !== undefined) observation.bodyTruncatedAtBytes = truncatedAt;
  return observation;
}

const STATUSES = [100, 199, 200, 201, 202, 204, 206, 299, 300, 302, 304, 400, 401, 409, 429, 500, 503];

describe('plainSuccess', () => {
  for (const profile of [ietfProfile, stripeProfile]) {
    it(`agrees with classify wherever it answers (${profile.keyHeader})`, () => {
      const rules: ClassifyRules = { profile, overrides: {}, otherStatus: 'permanent' };
      let answered = 0;
      for (const status of STATUSES) {
        for (const truncatedAt of [undefined, 4096]) {
          const observation = response(status, { 'idempotent-replayed': 'true' }, truncatedAt);
          const plain = plainSuccess(observation, rules.overrides);
          if (plain === undefined) {
            expect(status >= 200 && status < 300, `status ${status} left to classify`).toBe(false);
            continue;
          }
          answered++;
          expect(plain, `status ${status}`).toEqual(classify(observation, rules));
        }
      }
      expect(answered).toBe(12);
    });
  }

  it('leaves a 2xx to classify when an endpoint override names its status', () => {
    expect(plainSuccess(response(202), { 202: 'retryable' })).toBeUndefined();
    expect(plainSuccess(response(201), { 202: 'retryable' })).toMatchObject({ class: 'completed', status: 201 });
  });

  it('leaves a 2xx to next-step.ts when it carries a hint the record keeps (any header parseServerHintMs reads)', () => {
    for (const headers of [{ 'retry-after': '3' }, { 'ratelimit-reset': '9' }, { ratelimit: '"default";r=0;t=12' }]) {
      const observation = response(200, headers);
      expect(observation.kind === 'response' && parseServerHintMs(observation.header, 0)).toBeGreaterThan(0);
      expect(plainSuccess(observation, {}), JSON.stringify(headers)).toBeUndefined();
    }
  });

  it('answers anything but a response with undefined', () => {
    expect(plainSuccess({ kind: 'timeout', afterMs: 10 }, {})).toBeUndefined();
    expect(plainSuccess({ kind: 'transport_error', sent: 'not', code: 'ECONNREFUSED', message: 'refused' }, {})).toBe(
      undefined,
    );
  });
});
