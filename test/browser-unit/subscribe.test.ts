/**
 * The live view: what a snapshot shows (pure), and how often the store is
 * read and subscribers are called (coalesced, only on change).
 */
import { describe, expect, it } from 'vitest';
import { type ClientStatus, LiveView, snapshotOf } from '../../src/browser/subscribe.js';
import { countAttempts, OPERATION_STATES, writeOrder } from '../../src/model/vocabulary.js';

const VOCABULARY = { countAttempts, OPERATION_STATES, writeOrder };

import type { OperationRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store/contract.js';

const status: ClientStatus = {
  leader: true,
  mode: 'locks',
  online: true,
  storage: { persisted: undefined, wiped: undefined },
};

function record(key: string, patch: Partial<OperationRecord> = {}): OperationRecord {
  return { ...sampleRecord(key), ...patch };
}

describe('snapshotOf', () => {
  const records = [
    record('b', { createdAt: 2, state: 'pending', meta: { userId: 'u1' }, scope: 'cart' }),
    record('a', {
      createdAt: 1,
      state: 'in_flight',
      meta: { userId: 'u1' },
      attempts: [
        { n: 1, owner: 'o', startedAt: 1, endedAt: 2, sent: 'not', class: 'not_sent' },
        { n: 2, owner: 'o', startedAt: 3, sent: 'maybe' },
      ],
    }),
    record('c', {
      createdAt: 3,
      state: 'blocked',
      meta: { userId: 'u2' },
      attempts: [{ n: 1, owner: 'o', startedAt: 1, endedAt: 2, sent: 'definitely', class: 'correctable', status: 401 }],
      failure: { reason: 'correctable', message: 'no', remediation: 'sign in', status: 401 },
    }),
  ];

  it('lists operations oldest first with their attempts, and counts states', () => {
    const snapshot = snapshotOf(VOCABULARY, records, status);
    expect(snapshot.operations.map((o) => o.key)).toEqual(['a', 'b', 'c']);
    const [a, b, c] = snapshot.operations;
    // An attempt that never left is not counted as one (it cost nothing).
    expect(a).toMatchObject({ state: 'in_flight', attempts: 1, tries: 2, lastAttempt: { n: 2, class: undefined } });
    expect(b).toMatchObject({ scope: 'cart', userId: 'u1', attempts: 0, lastAttempt: undefined });
    expect(c?.failure).toEqual({ reason: 'correctable', message: 'no', remediation: 'sign in', status: 401 });
    expect(snapshot.counts).toMatchObject({ pending: 1, in_flight: 1, blocked: 1, succeeded: 0 });
    expect(snapshot.active).toBe(2);
    expect(snapshot).toMatchObject({ leader: true, mode: 'locks', online: true });
  });

  it('filters by user and by state', () => {
    expect(snapshotOf(VOCABULARY, records, status, { userId: 'u2' }).operations.map((o) => o.key)).toEqual(['c']);
    expect(snapshotOf(VOCABULARY, records, status, { userId: undefined }).operations).toHaveLength(3);
    expect(
      snapshotOf(VOCABULARY, records, status, { states: ['pending', 'in_flight'] }).operations.map((o) => o.key),
    ).toEqual(['a', 'b']);
  });

  it('is plain data (a UI can clone or post it)', () => {
    const snapshot = snapshotOf(VOCABULARY, records, status);
    expect(structuredClone(snapshot)).toEqual(snapshot);
  });
});

describe('LiveView', () => {
  function view(load: () => Promise<OperationRecord[]>, errors: unknown[] = []) {
    return new LiveView({
      vocabulary: VOCABULARY,
      load,
      status: () => status,
      currentUser: () => 'u1',
      onError: (e) => errors.push(e),
    });
  }

  it("gives each subscriber the current user's operations, and a new snapshot only when it changed", async () => {
    let stored = [record('a', { meta: { userId: 'u1' } }), record('z', { meta: { userId: 'u2' } })];
    const live = view(async () => stored);
    const seen: string[][] = [];
    live.subscribe((s) => seen.push(s.operations.map((o) => `${o.key}:${o.state}`)));
    await live.refresh();
    await live.refresh();
    expect(seen).toEqual([['a:pending']]);
    stored = [record('a', { meta: { userId: 'u1' }, state: 'succeeded' })];
    await live.refresh();
    expect(seen).toEqual([['a:pending'], ['a:succeeded']]);
  });

  it('a burst of refreshes costs one more read, not one per event', async () => {
    let reads = 0;
    let release!: () => void;
    const live = view(async () => {
      reads++;
      if (reads === 1) await new Promise<void>((resolve) => (release = resolve));
      return [];
    });
    live.subscribe(() => undefined);
    const burst = Array.from({ length: 20 }, () => live.refresh());
    release();
    await Promise.all(burst);
    expect(reads).toBe(2);
  });

  it('a throwing subscriber does not stop the others', async () => {
    const errors: unknown[] = [];
    const live = view(async () => [record('a')], errors);
    const calls: number[] = [];
    live.subscribe(() => {
      throw new Error('ui bug');
    });
    live.subscribe(() => calls.push(1));
    await live.refresh();
    expect(calls).toEqual([1]);
    expect(errors).toHaveLength(1);
  });

  it('reads nothing without subscribers, and stops calling after unsubscribe', async () => {
    let reads = 0;
    const live = view(async () => {
      reads++;
      return [record('a')];
    });
    await live.refresh();
    expect(reads).toBe(0);
    const calls: number[] = [];
    const off = live.subscribe(() => calls.push(1));
    await live.refresh();
    off();
    await live.refresh();
    expect(calls).toEqual([1]);
  });
});
