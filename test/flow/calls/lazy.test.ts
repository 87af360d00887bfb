/**
 * `lazy`: how the client loads its working parts off the start-up path.
 * One load shared by every caller, a failed load tried again, and the load
 * reported to the runtime as real work so a fake clock waits for it.
 */
import { describe, expect, it } from 'vitest';
import { lazy } from '../../../src/flow/calls/lazy.js';
import { systemRuntime } from '../../../src/runtime.js';
import { createFakeRuntime } from '../../../src/testing/fake-runtime.js';

/** A load the test finishes by hand, counting how often it was started. */
function manualLoad<T>(): {
  load: () => Promise<T>;
  starts: () => number;
  finish(value: T): void;
  fail(error: Error): void;
} {
  let starts = 0;
  let settle: { resolve(value: T): void; reject(error: Error): void } | undefined;
  return {
    load: () => {
      starts++;
      return new Promise<T>((resolve, reject) => {
        settle = { resolve, reject };
      });
    },
    starts: () => starts,
    finish: (value) => settle?.resolve(value),
    fail: (error) => settle?.reject(error),
  };
}

describe('lazy', () => {
  it('loads once for every caller, and callers resume in the order they asked', async () => {
    const m = manualLoad<string>();
    const get = lazy(m.load, systemRuntime);
    const order: number[] = [];
    const calls = [1, 2, 3].map((n) => get().then((value) => order.push(n) && value));
    expect(m.starts()).toBe(1);
    m.finish('parts');
    expect(await Promise.all(calls)).toEqual(['parts', 'parts', 'parts']);
    expect(order).toEqual([1, 2, 3]);
    expect(await get()).toBe('parts');
    expect(m.starts()).toBe(1);
  });

  it('a failed load rejects its callers and the next call loads again', async () => {
    const m = manualLoad<string>();
    const get = lazy(m.load, systemRuntime);
    const first = get();
    m.fail(new Error('chunk not fetched'));
    await expect(first).rejects.toThrow('chunk not fetched');
    const second = get();
    expect(m.starts()).toBe(2);
    m.finish('parts');
    expect(await second).toBe('parts');
  });

  it('is real work to a fake runtime: virtual time does not pass while it loads', async () => {
    const rt = createFakeRuntime({ seed: 1 });
    const m = manualLoad<string>();
    const get = lazy(m.load, rt);
    const loaded = get();
    expect(rt.busy).toBe(1);
    const before = rt.now();
    // A timer due in 1 s: run() must not fire it while the load is outstanding.
    let fired = false;
    void rt.sleep(1_000).then(() => {
      fired = true;
    });
    setTimeout(() => m.finish('parts'), 20);
    expect(await rt.run(loaded)).toBe('parts');
    expect(fired).toBe(false);
    expect(rt.now()).toBe(before);
    expect(rt.busy).toBe(0);
  });
});
