import { v4 as uuidv4 } from 'uuid';

/**
 * The only place that touches clocks, timers, randomness and id minting.
 *
 * Everything time- or chance-dependent in oncely goes through a `Runtime`, so
 * tests can inject a fake one (see `createFakeRuntime` in `oncely/testing`)
 * and never wait on the wall clock for a retry delay.
 */
export interface Runtime {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. Rejects with the signal's reason when
   * `signal` aborts first, and clears its timer so nothing is left pending.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A float in [0, 1). */
  random(): number;
  /** A random (v4) UUID. */
  uuid(): string;
}

/** The real runtime: `Date.now`, `setTimeout`, `Math.random`, `crypto.randomUUID`. */
export const systemRuntime: Runtime = {
  now: () => Date.now(),
  sleep: sleepWithTimers,
  random: () => Math.random(),
  // randomUUID needs a secure context in browsers; uuid's v4 covers the rest.
  uuid: () => globalThis.crypto?.randomUUID?.() ?? uuidv4(),
};

function sleepWithTimers(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
