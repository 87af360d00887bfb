import { describe, expect, it } from 'vitest';
import { closestName } from '../../src/policy/option-keys.js';

const KNOWN = ['maxAttempts', 'deadlineMs', 'backoff', 'budget', 'list'];

describe('closestName (did-you-mean for an unknown option)', () => {
  it.each([
    ['deadlineMS', 'deadlineMs'], // case only
    ['maxAttempt', 'maxAttempts'], // one letter missing
    ['bakcoff', 'backoff'], // neighbours swapped: one edit
    ['lsit', 'list'], // a swap in a short name, where one edit is all that is allowed
    ['budgte', 'budget'],
  ])('%s → %s', (typo, meant) => {
    expect(closestName(typo, KNOWN)).toBe(meant);
  });

  it('suggests nothing for a name too far from every accepted one', () => {
    expect(closestName('retries', KNOWN)).toBeUndefined();
    expect(closestName('lizz', KNOWN)).toBeUndefined(); // two edits from `list`, one allowed at four letters
  });
});
