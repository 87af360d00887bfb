/**
 * The names one database's queue is known by across an origin: the drainer
 * lock, the tab channel and the Background Sync tag. Pages and the service
 * worker must agree on them to share one queue, so they are made in one
 * place from the database name.
 */

/** The Web Lock held by whoever drains (a page, or the service worker). */
export const drainerLockName = (database: string): string => `oncely:drainer:${database}`;

/** The BroadcastChannel over which pages and the worker exchange hints and events. */
export const channelName = (database: string): string => `oncely:${database}`;

/** The `sync` (and `periodicsync`) tag that wakes the service worker to drain this database. */
export const syncTag = (database: string): string => `oncely:${database}`;
