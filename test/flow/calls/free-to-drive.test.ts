import { describe, expect, it } from 'vitest';
import { driveOrder, freeToDrive, orderForResume } from '../../../src/flow/calls/resume-order.js';
import { writeOrder } from '../../../src/model.js';
import { earliestFirst } from '../../../src/store/file/scan.js';
import { PackedSummaries } from '../../../src/store/packed-summaries.js';
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

describe('driveOrder (the pass, on a packed listing)', () => {
  it('drives what freeToDrive keeps, in the order of orderForResume, with each scope', () => {
    // Ties on due time, scopes out of creation order, held operations in two scopes and one without.
    const summaries: RecordSummary[] = Array.from({ length: 300 }, (_, i) => ({
      key: `op-${(i * 37) % 300}`,
      state: 'pending',
      nextAttemptAt: 1_000 + ((i * 7) % 11),
      createdAt: 500,
      seq: 500_000 + ((i * 13) % 300),
      ...(i % 4 === 0 ? { scope: `cart-${i % 3}` } : {}),
      ...(i === 40 || i === 99 || i === 12 ? { lease: { owner: 'other', until: 9_000 } } : {}),
    }));
    const isFree = (r: RecordSummary) => r.lease === undefined;
    const expected = orderForResume(
      freeToDrive(earliestFirst([...summaries], undefined), isFree, writeOrder),
      writeOrder,
    );
    expect(expected.length).toBeLessThan(297);
    const list = driveOrder(PackedSummaries.of(summaries), isFree, writeOrder);
    expect([...list]).toEqual(expected.map((r) => ({ key: r.key, scope: r.scope })));
  });
});
