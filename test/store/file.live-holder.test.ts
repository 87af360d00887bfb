/**
 * A claim is taken from a holder we cannot check only once it stayed
 * unchanged for as long as its holder refreshes it by: the holder's own
 * `staleLockMs`, declared in its holder line, when it is longer than the
 * taker's. Before, a second exclusive handle opened with `staleLockMs: 500`
 * took the directory from a live owner (default 10 s, refreshing every
 * 3.3 s) in about 0.7 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockTimeoutError } from '../../src/node.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

afterEach(removeTempDirs);

describe('an exclusive store and a taker with a shorter staleLockMs', () => {
  it('does not take the directory from a live owner between two of its refreshes', async () => {
    const dir = tempDir();
    const owner = fileStore({ dir, exclusive: true });
    await owner.put(sampleRecord('k1'));
    // The taker's time is virtual: the owner (real time) does not refresh its claim while the taker watches.
    const rt = createFakeRuntime();
    const taker = fileStore({ dir, exclusive: true, staleLockMs: 500, lockTimeoutMs: 5_000, runtime: rt });
    try {
      await expect(rt.run(taker.get('k1'))).rejects.toBeInstanceOf(LockTimeoutError);
      // The owner still has it: its writes are acknowledged.
      await owner.put(sampleRecord('k2'));
      expect((await owner.get('k2'))?.key).toBe('k2');
    } finally {
      await owner.close();
      await taker.close();
    }
  });

  it('takes it once it stayed unchanged for the owner’s own staleLockMs (an owner that stopped refreshing)', async () => {
    const dir = tempDir();
    // Its own time stands still from here: it never refreshes its claim (frozen, or on a host we cannot check).
    const ownerRt = createFakeRuntime();
    const owner = fileStore({ dir, exclusive: true, staleLockMs: 2_000, runtime: ownerRt });
    await ownerRt.run(owner.put(sampleRecord('k1')));
    const rt = createFakeRuntime();
    const taker = fileStore({ dir, exclusive: true, staleLockMs: 500, lockTimeoutMs: 5_000, runtime: rt });
    try {
      const started = rt.monotonicNow();
      // In: no LockTimeoutError (what the old owner journaled is not this test's concern).
      await rt.run(taker.get('k1'));
      expect(rt.monotonicNow() - started).toBeGreaterThanOrEqual(2_000);
    } finally {
      await taker.close();
      await ownerRt.run(owner.close()).catch(() => undefined);
    }
  });
});
