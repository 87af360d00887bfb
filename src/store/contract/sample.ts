/**
 * A valid record to start from in store tests (the contract suite's own
 * cases, and yours): every required field set, nothing optional.
 */
import { type OperationRecord, RECORD_VERSION } from '../../model.js';

/** A valid record for `key`, for tests. */
export function sampleRecord(key: string, overrides: Partial<OperationRecord> = {}): OperationRecord {
  return {
    v: RECORD_VERSION,
    key,
    request: {
      method: 'POST',
      url: 'https://api.example.test/payments',
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: '{"amount":4800,"currency":"EUR"}' },
    },
    fingerprint: 'a'.repeat(64),
    policy: 'default',
    createdAt: 1_000,
    deadlineAt: 61_000,
    state: 'pending',
    epoch: 0,
    attempts: [],
    nextAttemptAt: 1_000,
    backoff: { retries: 0, lastDelayMs: 0 },
    ...overrides,
  };
}
