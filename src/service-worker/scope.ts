/**
 * What the drainer needs of a service worker's global scope, typed here:
 * the worker types (`ServiceWorkerGlobalScope`, `SyncEvent`) live in the
 * WebWorker library, which cannot be compiled together with the DOM one
 * the browser entry uses. Tests pass fakes of the same shape.
 */
import type { BroadcastChannelLike, NavigatorLike } from '../browser/env.js';

/** An event the worker may keep alive with `waitUntil` (`ExtendableEvent`). */
export interface ExtendableEventLike {
  waitUntil(promise: Promise<unknown>): void;
}

/** `sync` and `periodicsync`. */
export interface SyncEventLike extends ExtendableEventLike {
  readonly tag: string;
  /** Chromium's last retry of this registration: a rejection brings no further `sync`. */
  readonly lastChance?: boolean;
}

/** `message` (`ExtendableMessageEvent`). */
export interface MessageEventLike extends ExtendableEventLike {
  readonly data: unknown;
}

/** The subset of the worker's `Clients` used: is any page (or a worker of one) open that may hold a lock? */
export interface ClientsLike {
  matchAll(options: { includeUncontrolled?: boolean; type?: 'all' }): Promise<ReadonlyArray<unknown>>;
}

export interface ServiceWorkerScopeLike {
  addEventListener(type: 'sync' | 'periodicsync', listener: (event: SyncEventLike) => void): void;
  addEventListener(type: 'message', listener: (event: MessageEventLike) => void): void;
  readonly navigator?: NavigatorLike | undefined;
  readonly BroadcastChannel?: BroadcastChannelLike | undefined;
  readonly clients?: ClientsLike | undefined;
}

/** What a page posts to the worker (`registration.active.postMessage`) to ask it to drain a database now. */
export interface DrainMessage {
  type: 'oncely:drain';
  database: string;
}

export function isDrainMessage(data: unknown, database: string): data is DrainMessage {
  const message = data as Partial<DrainMessage> | null | undefined;
  return typeof message === 'object' && message?.type === 'oncely:drain' && message.database === database;
}
