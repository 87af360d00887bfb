/**
 * The memory store on its own: it sweeps itself (by its injected clock, at
 * most every `sweepIntervalMs`), and every write after a claim is fenced by
 * the claim's epoch.
 */
import { describe, expect, it } from 'vitest';
import { type ClaimRequest, memoryIdempotencyStore } from '../../src/server.js';

const claimOf = (key: string, overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
  scope: 's',
  key,
  fingerprint: 'f',
  leaseMs: 1_000,
  retentionMs: 10_000,
  rerunAbandoned: false,
  atomic: false,
  ...overrides,
});
const stored = { status: 201, headers: [] as [string, string][], body: new Uint8Array([1]) };

describe('memoryIdempotencyStore', () => {
  it('sweeps expired records on a claim once sweepIntervalMs has passed, not before', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now, sweepIntervalMs: 60_000 });
    for (const key of ['a', 'b', 'c']) await store.claim(claimOf(key));
    clock.now = 30_000; // expired, but the last sweep was less than a minute ago
    await store.claim(claimOf('d'));
    expect(store.size).toBe(4);
    clock.now = 60_000;
    await store.claim(claimOf('e'));
    expect(store.size).toBe(1); // a–d expired (d at 40 s); e is new
  });

  it('fences by epoch: a stale claim can neither store, release nor abandon a newer one', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now });
    const first = await store.claim(claimOf('k', { rerunAbandoned: true }));
    clock.now = 1_000;
    const second = await store.claim(claimOf('k', { rerunAbandoned: true }));
    expect(first).toMatchObject({ kind: 'claimed', epoch: 1, rerun: false });
    expect(second).toMatchObject({ kind: 'claimed', epoch: 2, rerun: true });
    const stale = { scope: 's', key: 'k', epoch: 1 };
    expect(await store.complete(stale, stored)).toBe(false);
    await store.release(stale);
    await store.abandon(stale);
    expect(await store.claim(claimOf('k'))).toMatchObject({ kind: 'in_progress', leaseRemainingMs: 1_000 });
    expect(await store.complete({ ...stale, epoch: 2 }, stored)).toBe(true);
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'completed', response: stored });
  });

  it('abandoned: reported once per epoch, a mismatch first', async () => {
    const clock = { now: 0 };
    const store = memoryIdempotencyStore({ now: () => clock.now });
    await store.claim(claimOf('k'));
    clock.now = 1_000;
    expect(await store.claim(claimOf('k', { fingerprint: 'other' }))).toEqual({ kind: 'mismatch' });
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'abandoned', epoch: 1, firstReport: true });
    expect(await store.claim(claimOf('k'))).toEqual({ kind: 'abandoned', epoch: 1, firstReport: false });
  });
});
