/**
 * Fake browser tabs for running the browser client in Node: a shared lock
 * manager with the Web Locks semantics we rely on (exclusive, FIFO, freed
 * when the holder's tab dies), `navigator.onLine` with online/offline
 * events, page visibility, a shared localStorage, and a BroadcastChannel
 * between the tabs of the origin.
 *
 * Every asynchronous hand-over (a lock grant, a message delivery) happens in
 * a later task, as in a browser, and is reported through `track`, so a test
 * runtime never moves virtual time while one is on its way.
 */
import type { BrowserEnv, KeyValueStorage, LockManagerLike } from '../../src/browser.js';

interface LockRequest {
  tab: number;
  callback: (lock: unknown) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

type Track = <T>(work: Promise<T>) => Promise<T>;

/** Runs `fn` in a later task, reported through `track` until it has run. */
function later(track: Track, fn: () => void): void {
  void track(new Promise<void>((resolve) => setImmediate(resolve))).then(fn);
}

/** One origin's lock manager, shared by the fake tabs. */
export class FakeLocks {
  readonly #held = new Map<string, LockRequest>();
  readonly #queues = new Map<string, LockRequest[]>();
  readonly #dead = new Set<number>();
  readonly #track: Track;
  /** Grants scheduled and not yet run. */
  #handOvers: Promise<void>[] = [];

  constructor(track: Track = (work) => work) {
    this.#track = (work) => {
      const tracked = track(work);
      this.#handOvers.push(tracked.then(() => undefined));
      return tracked;
    };
  }

  /** Resolves once every grant scheduled so far (and any it scheduled in turn) has run. */
  async settled(): Promise<void> {
    while (this.#handOvers.length > 0) {
      await Promise.all(this.#handOvers.splice(0));
      // Let the callbacks that ran after each grant finish their own step.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The `navigator.locks` of tab `tab`. */
  forTab(tab: number): LockManagerLike {
    return {
      request: (name, options, callback) =>
        new Promise((resolve, reject) => {
          if (this.#dead.has(tab)) return;
          if (options.signal?.aborted) {
            reject(new DOMException('aborted', 'AbortError'));
            return;
          }
          const request: LockRequest = {
            tab,
            callback,
            resolve,
            reject,
            signal: options.signal,
            onAbort: () => {
              const queue = this.#queues.get(name) ?? [];
              const index = queue.indexOf(request);
              if (index >= 0) {
                queue.splice(index, 1);
                reject(new DOMException('aborted', 'AbortError'));
              }
            },
          };
          options.signal?.addEventListener('abort', request.onAbort, { once: true });
          const queue = this.#queues.get(name) ?? [];
          this.#queues.set(name, queue);
          queue.push(request);
          // Like a browser: the callback runs in a later task, never inside request().
          later(this.#track, () => this.#grant(name));
        }),
    };
  }

  /** Who holds `name` (a tab number), if anyone. */
  holder(name: string): number | undefined {
    return this.#held.get(name)?.tab;
  }

  /** The tab's document went away: its locks are freed, its callbacks never finish. */
  kill(tab: number): void {
    this.#dead.add(tab);
    for (const [name, request] of [...this.#held]) {
      if (request.tab === tab) {
        this.#held.delete(name);
        this.#grant(name);
      }
    }
    for (const queue of this.#queues.values()) {
      for (let i = queue.length - 1; i >= 0; i--) if (queue[i]?.tab === tab) queue.splice(i, 1);
    }
  }

  #grant(name: string): void {
    if (this.#held.has(name)) return;
    const next = this.#queues.get(name)?.shift();
    if (next === undefined) return;
    next.signal?.removeEventListener('abort', next.onAbort);
    this.#held.set(name, next);
    next.callback({ name }).then(
      (value) => this.#finish(name, next, () => next.resolve(value)),
      (error: unknown) => this.#finish(name, next, () => next.reject(error)),
    );
  }

  #finish(name: string, request: LockRequest, settle: () => void): void {
    settle();
    // A dead tab's lock was freed when it died; the next holder must keep it.
    if (this.#dead.has(request.tab)) return;
    if (this.#held.get(name) === request) this.#held.delete(name);
    this.#grant(name);
  }
}

export class MapStorage implements KeyValueStorage {
  readonly map = new Map<string, string>();
  getItem(key: string): string | null {
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.map.set(key, value);
  }
}

class FakeDocument extends EventTarget {
  visibilityState: 'visible' | 'hidden' = 'visible';
}

export interface FakeTab {
  env: BrowserEnv;
  setOnline(online: boolean): void;
  setVisible(visible: boolean): void;
}

export interface FakeOrigin {
  locks: FakeLocks;
  localStorage: MapStorage;
  /** A new tab of this origin. `locks: false` gives it no Web Locks. */
  tab(options?: { locks?: boolean; broadcast?: boolean; indexedDB?: IDBFactory }): FakeTab & { id: number };
}

/** The origin's BroadcastChannel: delivers to every other open channel of the same name, in a later task. */
function fakeBroadcastChannel(track: Track): typeof BroadcastChannel {
  const open = new Map<string, Set<FakeChannel>>();
  class FakeChannel extends EventTarget {
    readonly name: string;
    onmessage: ((event: MessageEvent) => void) | null = null;
    #closed = false;
    constructor(name: string) {
      super();
      this.name = name;
      const peers = open.get(name) ?? new Set();
      open.set(name, peers);
      peers.add(this);
    }
    postMessage(message: unknown): void {
      if (this.#closed) throw new DOMException('channel closed', 'InvalidStateError');
      const data = structuredClone(message);
      for (const peer of open.get(this.name) ?? []) {
        if (peer === this) continue;
        later(track, () => {
          if (!peer.#closed) peer.onmessage?.(new MessageEvent('message', { data }));
        });
      }
    }
    close(): void {
      this.#closed = true;
      open.get(this.name)?.delete(this);
    }
  }
  return FakeChannel as unknown as typeof BroadcastChannel;
}

/** `track`: how hand-overs are reported (the test runtime's `track`). */
export function fakeOrigin(track: Track = (work) => work): FakeOrigin {
  const locks = new FakeLocks(track);
  const channel = fakeBroadcastChannel(track);
  const localStorage = new MapStorage();
  let tabs = 0;
  return {
    locks,
    localStorage,
    tab(options = {}) {
      const id = ++tabs;
      let onLine = true;
      const window = new EventTarget();
      const document = new FakeDocument();
      const navigator = {
        get onLine() {
          return onLine;
        },
        locks: options.locks === false ? undefined : locks.forTab(id),
      };
      return {
        id,
        env: {
          navigator,
          window,
          document,
          localStorage,
          BroadcastChannel: options.broadcast === false ? undefined : channel,
          indexedDB: options.indexedDB,
        },
        setOnline(online) {
          onLine = online;
          window.dispatchEvent(new Event(online ? 'online' : 'offline'));
        },
        setVisible(visible) {
          document.visibilityState = visible ? 'visible' : 'hidden';
          document.dispatchEvent(new Event('visibilitychange'));
        },
      };
    },
  };
}
