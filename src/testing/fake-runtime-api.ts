/**
 * What a test sees of the fake runtime: its options, the `FakeRuntime`
 * interface (virtual time, parking, stepping the clock) and the seeded
 * random sequence. The machinery is in `fake-runtime.ts`.
 */
import type { Runtime } from '../runtime.js';

export interface FakeRuntimeOptions {
  /** Start of virtual time (epoch ms). @default 1_767_225_600_000 (2026-01-01) */
  startMs?: number;
  /** Seed of the random sequence. @default 1 */
  seed?: number;
  /** The real fetch behind `fetch`. @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

export interface RunOptions {
  /**
   * Fail (rather than hang) when tracked work stays outstanding this long in
   * real time with nothing else happening: a request the server holds
   * without parking it, a store that never answers. A diagnosis, never a
   * reason to move time. @default 15_000
   */
  stalledAfterMs?: number;
  /** Fail if virtual time would advance more than this. @default 24 h */
  maxVirtualMs?: number;
}

/** The request header by which the runtime's `fetch` names each request, so a server can `park` it. */
export const FAKE_REQUEST_HEADER = 'x-oncely-fake-request';

export interface FakeRuntime extends Runtime {
  /**
   * A fetch that names each request (header `x-oncely-fake-request`) so a
   * server holding it can `park` it. Pass it to the client with the runtime.
   */
  readonly fetch: typeof globalThis.fetch;
  /** Requests sent through `fetch` and not yet answered. */
  readonly inFlight: number;
  /** Tracked work outstanding now (store operations, attempts), minus parked requests. */
  readonly busy: number;
  /** Sleeps waiting now (not counting `schedule`d housekeeping). */
  readonly pendingTimers: number;
  /** Every sleep requested so far, in ms, in order (for assertions on delays). */
  readonly sleeps: readonly number[];
  /**
   * Marks the request named `requestId` (its `x-oncely-fake-request`
   * header) as waiting on virtual time until `until` settles or the request
   * ends: time may move meanwhile. Unknown ids are ignored.
   */
  park(requestId: string | undefined, until: Promise<unknown>): void;
  /**
   * Steps the wall clock (`now()`) by `ms`, forward or back, as an NTP
   * correction or a user changing the time would: `monotonicNow()` and the
   * timers do not move.
   */
  stepClock(ms: number): void;
  /** Moves virtual time forward by `ms`, firing due sleeps in order, each once the engine is idle. */
  advance(ms: number): Promise<void>;
  /** Settles `promise`, advancing virtual time to the next timer whenever the engine is idle. */
  run<T>(promise: Promise<T>, options?: RunOptions): Promise<T>;
}

/** A seeded random sequence in [0, 1) (Mulberry32: tiny, fast, good enough for jitter in tests). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
