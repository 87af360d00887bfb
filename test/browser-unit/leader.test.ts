/**
 * Drainer election: one leader per lock name, handed over when the holder
 * releases or its tab dies; "leases" mode where Web Locks are missing.
 */
import { describe, expect, it, vi } from 'vitest';
import { electLeader, type Leadership } from '../../src/browser/leader.js';
import { FakeLocks } from './fakes.js';

describe('electLeader', () => {
  it('with Web Locks exactly one tab leads; the next one takes over when it releases or dies', async () => {
    const locks = new FakeLocks();
    const tabs = [1, 2, 3].map((tab) => electLeader({ name: 'oncely:drainer:db', locks: locks.forTab(tab) }));
    const changes: string[] = [];
    for (const [i, t] of tabs.entries()) t.onChange((leader) => changes.push(`${i + 1}:${leader}`));
    await locks.settled();
    const leaders = (): number[] => tabs.flatMap((t, i) => (t.isLeader() ? [i + 1] : []));
    expect(tabs.every((t) => t.mode === 'locks')).toBe(true);
    expect(leaders()).toEqual([1]);

    await (tabs[0] as Leadership).release();
    await locks.settled();
    expect(leaders()).toEqual([2]);

    // Tab 2's document goes away without releasing: the browser frees its lock.
    locks.kill(2);
    await locks.settled();
    expect(locks.holder('oncely:drainer:db')).toBe(3);
    expect(tabs[2]?.isLeader()).toBe(true);
    expect(changes).toEqual(['1:true', '1:false', '2:true', '3:true']);
    await tabs[2]?.release();
  });

  it('a tab that releases before it was granted the lock never leads', async () => {
    const locks = new FakeLocks();
    const first = electLeader({ name: 'x', locks: locks.forTab(1) });
    const second = electLeader({ name: 'x', locks: locks.forTab(2) });
    await locks.settled();
    expect(first.isLeader()).toBe(true);
    await second.release();
    await first.release();
    await locks.settled();
    expect(second.isLeader()).toBe(false);
    expect(locks.holder('x')).toBeUndefined();
  });

  it('without Web Locks every tab drains ("leases" mode)', async () => {
    const a = electLeader({ name: 'x', locks: undefined });
    const b = electLeader({ name: 'x', locks: undefined });
    expect([a.mode, b.mode]).toEqual(['leases', 'leases']);
    expect([a.isLeader(), b.isLeader()]).toEqual([true, true]);
    await a.release();
  });

  it('a lock manager that refuses falls back to leases and says why', async () => {
    const errors: unknown[] = [];
    const refusing = { request: () => Promise.reject(new DOMException('no', 'SecurityError')) };
    const tab = electLeader({ name: 'x', locks: refusing, onError: (e) => errors.push(e) });
    await vi.waitUntil(() => errors.length > 0);
    expect(tab.mode).toBe('leases');
    expect(tab.isLeader()).toBe(true);
    expect(errors).toHaveLength(1);
  });
});
