import { describe, expect, it } from 'vitest';
import { timeline } from '../../src/cli/format.js';
import { stripeProfile } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';

describe('oncely show', () => {
  const decline = { error: { code: 'card_declined', decline_code: 'insufficient_funds', type: 'card_error' } };
  const failed = sampleRecord('pay-1', {
    state: 'failed',
    policySnapshot: { profile: JSON.parse(JSON.stringify(stripeProfile)) as Record<string, unknown> },
    failure: {
      reason: 'permanent',
      status: 402,
      message: 'The server rejected the request for good: status 402',
      remediation: 'Ask for another payment method and send a new operation.',
      response: {
        status: 402,
        headers: { 'content-type': 'application/json' },
        body: { encoding: 'json', text: JSON.stringify(decline) },
      },
    },
  });

  it("prints the server's final answer and the provider's reading of it", () => {
    const text = timeline(failed, failed.createdAt);
    expect(text).toContain('answer      402');
    expect(text).toContain(JSON.stringify(decline));
    expect(text).toContain('provider    stripe: type=card_error code=card_declined declineCode=insufficient_funds');
    expect(text.indexOf('answer')).toBeLessThan(text.indexOf('next step'));
  });

  it('prints no answer when the record kept none', () => {
    const { response: _r, ...failure } = failed.failure!;
    expect(timeline({ ...failed, failure }, failed.createdAt)).not.toContain('answer');
  });
});
