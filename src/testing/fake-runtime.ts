/**
 * A deterministic runtime for tests: virtual time, seeded randomness,
 * predictable uuids, and a tracked `fetch` so time can auto-advance only
 * while no real request is in flight. Nothing here waits on the wall clock
 * for a retry delay.
 */
import type { Runtime } from '../runtime.js';

export interface FakeRuntimeOptions {
  /** Start of virtual time (epoch ms). @default 1_767_225_600_000 (2026-01-01) */
  startMs?: number;
  /** Seed of the random sequence. @default 1 */
  seed?: number;
  /** The real fetch to track. @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

export interface RunOptions {
  /**
   * If a real request stays in flight this long (real ms) with nothing else
   * to do, virtual time advances anyway: the server is holding it, and only
   * a timeout (in virtual time) can end it. @default 200
   */
  stallMs?: number;
  /** Fail if virtual time advances more than this. @default 24 h */
  maxVirtualMs?: number;
}

export interface FakeRuntime extends Runtime {
  /** A fetch that counts in-flight requests; pass it to the client. */
  readonly fetch: typeof globalThis.fetch;
  /** Real requests in flight now. */
  readonly inFlight: number;
  /** Sleeps waiting now. */
  readonly pendingTimers: number;
  /** Every sleep requested so far, in ms, in order (for assertions on delays). */
  readonly sleeps: readonly number[];
  /** Moves virtual time forward by `ms`, firing due sleeps in order. */
  advance(ms: number): Promise<void>;
  /** Settles `promise`, advancing virtual time whenever everything else is idle. */
  run<T>(promise: Promise<T>, options?: RunOptions): Promise<T>;
}

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
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

const realTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const realDelay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function createFakeRuntime(options: FakeRuntimeOptions = {}): FakeRuntime {
  let now = options.startMs ?? 1_767_225_600_000;
  const random = seededRandom(options.seed ?? 1);
  const uuidRandom = seededRandom((options.seed ?? 1) ^ 0x5bd1e995);
  const timers: Timer[] = [];
  const sleeps: number[] = [];
  let seq = 0;
  let inFlight = 0;
  /** Real time of the last fetch start or finish: a fetch is "stalled" when nothing moved for a while. */
  let lastActivity = Date.now();
  const realFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  const fetch: typeof globalThis.fetch = async (input, init) => {
    inFlight++;
    lastActivity = Date.now();
    try {
      return await realFetch(input, init);
    } finally {
      inFlight--;
      lastActivity = Date.now();
    }
  };

  function sleep(ms: number, signal?: AbortSignal): Promise<void> {
    sleeps.push(ms);
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer: Timer = {
        at: now + Math.max(0, ms),
        seq: seq++,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const index = timers.indexOf(timer);
        if (index >= 0) timers.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      timers.push(timer);
      timers.sort((x, y) => x.at - y.at || x.seq - y.seq);
    });
  }

  /** Lets promise chains and already-finished I/O callbacks run. */
  async function settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await realTick();
  }

  async function advanceTo(target: number): Promise<void> {
    for (;;) {
      await settle();
      const next = timers[0];
      if (next === undefined || next.at > target) break;
      timers.shift();
      now = Math.max(now, next.at);
      next.resolve();
    }
    now = Math.max(now, target);
    await settle();
  }

  function uuid(): string {
    const bytes = Array.from({ length: 16 }, () => Math.floor(uuidRandom() * 256));
    bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
    const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  return {
    now: () => now,
    sleep,
    random,
    uuid,
    fetch,
    get inFlight() {
      return inFlight;
    },
    get pendingTimers() {
      return timers.length;
    },
    sleeps,
    advance: (ms) => advanceTo(now + ms),
    async run<T>(promise: Promise<T>, runOptions: RunOptions = {}): Promise<T> {
      const stallMs = runOptions.stallMs ?? 200;
      const limit = now + (runOptions.maxVirtualMs ?? 24 * 60 * 60 * 1000);
      let done = false;
      promise.then(
        () => {
          done = true;
        },
        () => {
          done = true;
        },
      );
      while (!done) {
        await settle();
        if (done) break;
        // Real requests are running: give them real time, unless none has
        // moved for `stallMs` (the server is holding them on purpose).
        if (inFlight > 0 && (Date.now() - lastActivity < stallMs || timers.length === 0)) {
          await realDelay(1);
          continue;
        }
        const next = timers[0];
        if (next === undefined) {
          // Nothing scheduled: real work (store I/O) must be pending.
          await realDelay(1);
          continue;
        }
        if (next.at > limit)
          throw new Error(
            `fake runtime: virtual time would pass the ${runOptions.maxVirtualMs ?? 86_400_000} ms limit`,
          );
        await advanceTo(next.at);
      }
      return promise;
    },
  };
}
