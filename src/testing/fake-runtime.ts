/**
 * A deterministic runtime for tests: virtual time, seeded randomness,
 * predictable uuids. Nothing here waits on the wall clock for a retry delay.
 *
 * Virtual time moves only when the engine is provably idle: every store
 * operation and every HTTP attempt is reported through `track` (the client
 * does it for you), and `run()` advances to the next timer only when no
 * tracked work is outstanding. There is no real-time fallback, so a store
 * write or a socket can never be overtaken by a timer, however slow or
 * loaded the machine.
 *
 * A server that holds a request on purpose (a scripted delay longer than
 * the attempt timeout, a hold) parks it with `park`: the attempt is then
 * waiting for virtual time, not for real I/O, and time may move on. The
 * reference server of `oncely/testing` does this when given the runtime,
 * for requests sent through this runtime's `fetch`.
 */
import { systemRuntime } from '../runtime.js';
import {
  FAKE_REQUEST_HEADER,
  type FakeRuntime,
  type FakeRuntimeOptions,
  type RunOptions,
  seededRandom,
} from './fake-runtime-api.js';

export type { FakeRuntime, FakeRuntimeOptions, RunOptions } from './fake-runtime-api.js';
export { FAKE_REQUEST_HEADER, seededRandom } from './fake-runtime-api.js';

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
  /** A `schedule`d callback: fires when time passes it, but `run` never moves time for it. */
  background?: true;
}

/** One macrotask turn: every microtask queued before it has run. */
const realTick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
const realImmediate = (): Promise<void> =>
  typeof setImmediate === 'function' ? new Promise((resolve) => setImmediate(resolve)) : realTick();

export function createFakeRuntime(options: FakeRuntimeOptions = {}): FakeRuntime {
  /** Virtual monotonic time: what timers run on. The wall clock is this plus `wallOffset`. */
  let now = options.startMs ?? 1_767_225_600_000;
  let wallOffset = 0;
  const random = seededRandom(options.seed ?? 1);
  const uuidRandom = seededRandom((options.seed ?? 1) ^ 0x5bd1e995);
  const timers: Timer[] = [];
  const sleeps: number[] = [];
  let seq = 0;
  let tracked = 0;
  let requestSeq = 0;
  /** Requests in flight through `fetch`, by id → parked? */
  const requests = new Map<string, { parked: number }>();
  let parked = 0;
  /** Bumped on every change of the busy count: `run` tells "stalled" from "slow". */
  let activity = 0;
  const idleWaiters: Array<() => void> = [];
  const realFetch = options.fetch ?? globalThis.fetch.bind(globalThis);

  const busy = (): number => tracked - parked;
  function changed(): void {
    activity++;
    if (busy() > 0) return;
    for (const wake of idleWaiters.splice(0)) wake();
  }

  function track<T>(work: Promise<T>): Promise<T> {
    tracked++;
    changed();
    return work.finally(() => {
      tracked--;
      changed();
    });
  }

  const fetch: typeof globalThis.fetch = async (input, init) => {
    const id = String(++requestSeq);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set(FAKE_REQUEST_HEADER, id);
    const entry = { parked: 0 };
    requests.set(id, entry);
    try {
      return await realFetch(input, { ...init, headers });
    } finally {
      // Whatever still parks this request stops counting with it, before the
      // attempt's own tracking ends: the count can never go below the truth.
      requests.delete(id);
      parked -= entry.parked;
      entry.parked = 0;
      changed();
    }
  };

  function park(requestId: string | undefined, until: Promise<unknown>): void {
    const entry = requestId === undefined ? undefined : requests.get(requestId);
    if (entry === undefined) return;
    entry.parked++;
    parked++;
    changed();
    const unpark = (): void => {
      if (requests.get(requestId as string) !== entry || entry.parked === 0) return;
      entry.parked--;
      parked--;
      changed();
    };
    until.then(unpark, unpark);
  }

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
      enqueue(timer);
    });
  }

  /** Inserts `timer`, keeping the queue sorted by (at, seq): after every timer due at or before it. */
  function enqueue(timer: Timer): void {
    let index = timers.length;
    while (index > 0 && (timers[index - 1] as Timer).at > timer.at) index--;
    timers.splice(index, 0, timer);
  }

  /**
   * Housekeeping (a checkpoint, a claim refresh) rides along with virtual
   * time: `advance` fires it, `run` fires it on its way to the next sleep,
   * but nothing waits for it, so `run` never jumps ahead just for it (an
   * interval re-arming itself would otherwise run virtual time away while
   * real I/O is in flight).
   */
  function schedule(ms: number, fn: () => void): () => void {
    const timer: Timer = { at: now + Math.max(0, ms), seq: seq++, resolve: fn, background: true };
    enqueue(timer);
    return () => {
      const index = timers.indexOf(timer);
      if (index >= 0) timers.splice(index, 1);
    };
  }

  /** Lets promise chains and callbacks of finished real I/O run. */
  async function settle(): Promise<void> {
    // Microtasks all run before the next macrotask: one turn lets every
    // promise chain the last event started run to its next real wait.
    await realImmediate();
  }

  /** Resolves once no tracked work is outstanding (at once if none is). */
  function whenIdle(): Promise<void> {
    if (busy() <= 0) return Promise.resolve();
    return new Promise((resolve) => idleWaiters.push(resolve));
  }

  /** Waits until the engine is idle and settled: only timers can make progress then. */
  async function quiesce(): Promise<void> {
    for (;;) {
      await whenIdle();
      const before = activity;
      await settle();
      if (busy() <= 0 && activity === before) return;
    }
  }

  function fireNext(): void {
    const next = timers.shift() as Timer;
    now = Math.max(now, next.at);
    next.resolve();
  }

  async function advanceTo(target: number): Promise<void> {
    for (;;) {
      await quiesce();
      const next = timers[0];
      if (next === undefined || next.at > target) break;
      fireNext();
    }
    now = Math.max(now, target);
    await quiesce();
  }

  function uuid(): string {
    const bytes = Array.from({ length: 16 }, () => Math.floor(uuidRandom() * 256));
    bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
    const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  return {
    now: () => now + wallOffset,
    monotonicNow: () => now,
    stepClock(ms) {
      wallOffset += ms;
    },
    sleep,
    schedule,
    random,
    uuid,
    track,
    sha256Hex: systemRuntime.sha256Hex,
    fetch,
    park,
    get inFlight() {
      return requests.size;
    },
    get busy() {
      return busy();
    },
    get pendingTimers() {
      return timers.filter((timer) => timer.background !== true).length;
    },
    sleeps,
    advance: (ms) => advanceTo(now + ms),
    async run<T>(promise: Promise<T>, runOptions: RunOptions = {}): Promise<T> {
      const stalledAfterMs = runOptions.stalledAfterMs ?? 15_000;
      const maxVirtualMs = runOptions.maxVirtualMs ?? 24 * 60 * 60 * 1000;
      const limit = now + maxVirtualMs;
      let done = false;
      const finished = promise.then(
        () => {
          done = true;
        },
        () => {
          done = true;
        },
      );
      let lastActivity = activity;
      let quietSince = Date.now();
      const checkStalled = (): void => {
        if (activity !== lastActivity) {
          lastActivity = activity;
          quietSince = Date.now();
        } else if (Date.now() - quietSince > stalledAfterMs) {
          throw new Error(
            `fake runtime: stalled for ${stalledAfterMs} ms with ${busy()} tracked operation(s) outstanding, ` +
              `${requests.size} request(s) in flight and ${timers.length} timer(s) pending. A server that holds ` +
              "a request on purpose must park it (startReferenceServer({ runtime }) with this runtime's fetch).",
          );
        }
      };
      while (!done) {
        // Real work outstanding: wait for it, never for a timer. Only a
        // diagnosis (nothing moved for stalledAfterMs) ends the wait early.
        while (busy() > 0 && !done) {
          await Promise.race([whenIdle(), finished, realDelay(50)]);
          checkStalled();
        }
        if (done) break;
        const before = activity;
        await settle();
        if (done || busy() > 0 || activity !== before) continue;
        const next = timers.find((timer) => timer.background !== true);
        if (next === undefined) {
          // Idle with nothing scheduled: something untracked is running (a
          // callback of the test's own); give it real time.
          await Promise.race([finished, realDelay(1)]);
          checkStalled();
          continue;
        }
        if (next.at > limit) throw new Error(`fake runtime: virtual time would pass the ${maxVirtualMs} ms limit`);
        // Housekeeping due first fires first, one per turn, each followed by a settle like any timer.
        fireNext();
      }
      return promise;
    },
  };
}

const realDelay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
