/**
 * What a write of the PostgreSQL store stores (`forWrite`, no database): the
 * text, and the record a read of that text returns, frozen. Computed from a
 * validated, frozen record, only the fields a transition changed are
 * checked, and the copy shares the rest; everything the quick check does
 * not vouch for takes the full check and is read back from the text.
 */
import { describe, expect, it } from 'vitest';
import { CorruptRecordError } from '../../src/errors.js';
import type { OperationRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store/contract.js';
import { frozenCopy } from '../../src/store/file/parsed.js';
import { forWrite } from '../../src/store/postgres/rows.js';

/** Whether every object and array in `value` is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

/** A stored record as the store keeps it: validated (a parse of its text) and frozen. */
function kept(overrides: Partial<OperationRecord> = {}): OperationRecord {
  const record = sampleRecord('pay', {
    policySnapshot: { attemptTimeoutMs: 5_000, profile: { a: [1, 2] } },
    ...overrides,
  });
  return frozenCopy(JSON.parse(JSON.stringify(record)) as OperationRecord, undefined, true);
}

const started = (from: OperationRecord): OperationRecord => ({
  ...from,
  state: 'in_flight',
  epoch: from.epoch + 1,
  lease: { owner: 'w1', until: 9_000 },
  attempts: [{ n: 1, owner: 'w1', startedAt: 2_000, sent: 'maybe' }],
});

describe('forWrite', () => {
  it('a transition of a kept record: its text, and a frozen record sharing what did not change', () => {
    const from = kept();
    const { text, record } = forWrite(started(from), from);
    expect(JSON.parse(text)).toEqual(record);
    expect(record).toEqual(started(from));
    expect(deeplyFrozen(record)).toBe(true);
    expect(record.policySnapshot).toBe(from.policySnapshot);
    expect(record.request).toBe(from.request);
    expect(record.attempts).not.toBe(from.attempts);
  });

  it('without a record to start from: frozen, and equal to its text read back', () => {
    const { text, record } = forWrite(sampleRecord('new', { meta: { tag: 'x' } }));
    expect(record).toEqual(JSON.parse(text));
    expect(deeplyFrozen(record)).toBe(true);
  });

  it.each<[string, (from: OperationRecord) => OperationRecord]>([
    ['an unknown state', (from) => ({ ...from, state: 'done' as never })],
    [
      'an attempt whose `sent` is not one of the three',
      (from) => ({ ...started(from), attempts: [{ n: 1, owner: 'w1', startedAt: 2_000, sent: 'perhaps' as never }] }),
    ],
    ['a negative due time', (from) => ({ ...from, nextAttemptAt: -1 })],
    ['a changed `meta` nested deeper than the limit', (from) => ({ ...from, meta: { deep: nested(70) } })],
    [
      'a changed policy snapshot nested deeper than the limit',
      (from) => ({ ...from, policySnapshot: { deep: nested(70) } }),
    ],
  ])('a transition to %s is refused, as a full check refuses it', (_, change) => {
    const from = kept();
    expect(() => forWrite(change(from), from)).toThrow(CorruptRecordError);
  });

  it('an unknown field is dropped, as the full check drops it', () => {
    const from = kept();
    const { text, record } = forWrite({ ...from, state: 'in_flight', extra: 1 } as never, from);
    expect('extra' in record).toBe(false);
    expect(JSON.parse(text)).toEqual(record);
    expect(record.state).toBe('in_flight');
  });

  it('a field set to undefined, or -0, is stored as a read returns it (the text read back)', () => {
    const from = kept({ lease: { owner: 'w1', until: 5_000 } });
    const { text, record } = forWrite({ ...from, lease: undefined, nextAttemptAt: -0 }, from);
    expect(record).toEqual(JSON.parse(text));
    expect('lease' in record).toBe(false);
    expect(Object.is(record.nextAttemptAt, 0)).toBe(true);
    expect(deeplyFrozen(record)).toBe(true);
  });

  it('a changed field holding U+0000 is kept as the database holds it: U+FFFD', () => {
    const from = kept();
    const next: OperationRecord = {
      ...from,
      state: 'succeeded',
      result: {
        status: 200,
        headers: {},
        body: { encoding: 'text', text: 'a\u0000b' },
        replayed: false,
        receivedAt: 3_000,
      },
    };
    const { text, record } = forWrite(next, from);
    expect(record.result?.body).toEqual({ encoding: 'text', text: 'a\ufffdb' });
    expect(JSON.parse(text)).toEqual(record);
  });
});

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { v: value };
  return value;
}
