/**
 * The browser globals the browser client reads, gathered in one place so
 * that unit tests can run it in Node with fakes, and so that a missing API
 * (no Web Locks in an insecure context, no BroadcastChannel, localStorage
 * that throws in a private window) degrades in one documented way.
 */

/** What the browser client needs from `navigator`. */
export interface NavigatorLike {
  /** `false` is trustworthy, `true` is not (captive portals, dead Wi-Fi). */
  readonly onLine?: boolean;
  readonly locks?: LockManagerLike | undefined;
  readonly storage?: StorageManagerLike | undefined;
  /** Where a Background Sync wake-up for the app's service worker is registered (see background-sync.ts). */
  readonly serviceWorker?: ServiceWorkerContainerLike | undefined;
}

/** The subset of `ServiceWorkerContainer` used: the active registration's `sync` manager (Chromium only). */
export interface ServiceWorkerContainerLike {
  readonly ready: Promise<{ readonly sync?: { register(tag: string): Promise<void> } | undefined }>;
}

/** The subset of `LockManager` used for drainer election. */
export interface LockManagerLike {
  request(
    name: string,
    options: { mode?: 'exclusive'; signal?: AbortSignal; ifAvailable?: boolean },
    /** With `ifAvailable`, called with `null` when another holder has the lock. */
    callback: (lock: unknown) => Promise<unknown>,
  ): Promise<unknown>;
}

/** The subset of `StorageManager` used to ask for persistent storage. */
export interface StorageManagerLike {
  persist?(): Promise<boolean>;
  persisted?(): Promise<boolean>;
}

/** The subset of `Storage` (localStorage) used for the wipe marker. */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** A `BroadcastChannel` constructor (the subset used). */
export type BroadcastChannelLike = new (
  name: string,
) => {
  postMessage(message: unknown): void;
  close(): void;
  onmessage: ((event: MessageEvent) => void) | null;
};

export interface BrowserEnv {
  navigator?: NavigatorLike | undefined;
  /** Receives `online` / `offline`. */
  window?: EventTarget | undefined;
  /** Receives `visibilitychange`; `visibilityState` is read. */
  document?: (EventTarget & { readonly visibilityState?: string }) | undefined;
  localStorage?: KeyValueStorage | undefined;
  BroadcastChannel?: BroadcastChannelLike | undefined;
  indexedDB?: IDBFactory | undefined;
}

/** The real globals (each may be missing: Node, workers, insecure contexts). */
export function globalEnv(): BrowserEnv {
  const g = globalThis as {
    navigator?: NavigatorLike;
    window?: EventTarget;
    document?: EventTarget & { visibilityState?: string };
    BroadcastChannel?: BroadcastChannelLike;
    indexedDB?: IDBFactory;
  };
  return {
    navigator: g.navigator,
    window: g.window ?? (typeof addEventListener === 'function' ? (globalThis as unknown as EventTarget) : undefined),
    document: g.document,
    localStorage: safeLocalStorage(),
    BroadcastChannel: g.BroadcastChannel,
    indexedDB: g.indexedDB,
  };
}

/** `localStorage`, or undefined where reading it throws (sandboxed frames, disabled storage). */
function safeLocalStorage(): KeyValueStorage | undefined {
  try {
    return (globalThis as { localStorage?: KeyValueStorage }).localStorage;
  } catch {
    return undefined;
  }
}
