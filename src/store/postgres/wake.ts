/**
 * Wake-ups over LISTEN/NOTIFY. A trigger (migration 1) notifies the table's
 * channel whenever a row becomes claimable by anyone: written unleased and
 * open (enqueued by a process that does not drive it, or a lease released
 * on shutdown). Subscribers hear it at once instead of at their next poll.
 *
 * A notification is a hint, never the truth: one can be missed (a dropped
 * connection, a worker starting after it was sent), so workers keep polling
 * with `resume()` as the fallback. The listening connection is held for as
 * long as anyone subscribes, and reconnects after an error.
 */
import type { Pool, PoolClient } from 'pg';

/** Delay before listening again after the connection failed. */
const RECONNECT_MS = 1_000;

export interface Wake {
  subscribe(fn: () => void): () => void;
  close(): Promise<void>;
}

export function wakeChannel(pool: Pool, channel: string, tenant: string): Wake {
  const listeners = new Set<() => void>();
  let client: PoolClient | undefined;
  let connecting: Promise<void> | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const notify = (message: { channel: string; payload?: string | undefined }): void => {
    if (message.channel !== channel || (message.payload ?? '') !== tenant) return;
    for (const fn of [...listeners]) fn();
  };

  const onError = (error: Error): void => {
    if (client !== undefined) drop(client, error);
  };

  /** Gives the connection back (destroyed: it may be broken) and listens again later if anyone still subscribes. */
  const drop = (held: PoolClient, error?: Error): void => {
    if (client !== held) return;
    client = undefined;
    detach(held);
    held.release(error ?? true);
    if (!closed && listeners.size > 0) {
      retry = setTimeout(() => {
        retry = undefined;
        void listen();
      }, RECONNECT_MS);
      retry.unref?.();
    }
  };

  /** The pool hands this connection to others afterwards: none of our listeners may stay on it. */
  function detach(held: PoolClient): void {
    held.removeListener('notification', notify);
    held.removeListener('error', onError);
  }

  function listen(): Promise<void> {
    if (client !== undefined || closed) return Promise.resolve();
    connecting ??= (async () => {
      try {
        const held = await pool.connect();
        held.on('notification', notify);
        held.on('error', onError);
        client = held;
        await held.query(`LISTEN "${channel}"`);
        // Work may have appeared while nobody listened: one wake-up covers it.
        for (const fn of [...listeners]) fn();
      } catch {
        if (client !== undefined) drop(client);
        else if (!closed && listeners.size > 0 && retry === undefined) {
          retry = setTimeout(() => {
            retry = undefined;
            void listen();
          }, RECONNECT_MS);
          retry.unref?.();
        }
      } finally {
        connecting = undefined;
      }
    })();
    return connecting;
  }

  async function stop(): Promise<void> {
    if (retry !== undefined) clearTimeout(retry);
    retry = undefined;
    await connecting;
    const held = client;
    if (held === undefined) return;
    client = undefined;
    detach(held);
    try {
      await held.query(`UNLISTEN "${channel}"`);
      held.release();
    } catch (error) {
      held.release(error as Error);
    }
  }

  return {
    subscribe(fn) {
      listeners.add(fn);
      void listen();
      return () => {
        listeners.delete(fn);
        if (listeners.size === 0) void stop();
      };
    },
    async close() {
      closed = true;
      listeners.clear();
      await stop();
    },
  };
}
