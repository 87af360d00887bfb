import { describe, expect, it } from 'vitest';
import { freeToDrive } from '../../../src/flow/calls/resume-order.js';
import { writeOrder } from '../../../src/model.js';
import type { RecordSummary } from '../../../src/store/store.js';

const summary = (key: string, seq: number, scope?: string, owner?: string): RecordSummary => ({
  key,
  state: 'pending',
  nextAttemptAt: 0,
  createdAt: 0,
  seq,
  ...(scope === undefined ? {} : { scope }),
  ...(owner === undefined ? {} : { lease: { owner, until: 1 } }),
});

describe('freeToDrive', () => {
  const isFree = (r: RecordSummary) => r.lease === undefined;

  it('leaves out what another owner holds, and the rest of its scope behind it', () => {
    const records = [
      summary('s1-a', 1, 's1'),
      summary('s1-b', 2, 's1', 'other'),
      summary('s1-c', 3, 's1'),
      summary('s2-a', 4, 's2'),
      summary('free', 5),
      summary('held', 6, undefined, 'other'),
    ];
    expect(freeToDrive(records, isFree, writeOrder).map((r) => r.key)).toEqual(['s1-a', 's2-a', 'free']);
  });

  it('orders a scope by creation, not by list position', () => {
    const records = [summary('late', 9, 's'), summary('early', 1, 's', 'other')];
    expect(freeToDrive(records, isFree, writeOrder)).toEqual([]);
  });

  it('keeps everything when nothing is held', () => {
    const records = [summary('a', 1, 's'), summary('b', 2, 's'), summary('c', 3)];
    expect(freeToDrive(records, isFree, writeOrder)).toEqual(records);
  });
});
