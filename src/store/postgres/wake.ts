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
 *
 * The listening connection is its own, outside the pool: a LISTEN holds its
 * connection for as long as anyone subscribes, and taken from the pool it
 * would starve the queries of a small pool (with `poolSize: 1`, forever).
 */
import type { Client, Pool } from 'pg';
import { loadPg } from './load-pg.js';

/** Delay before listening again after the connection failed. */
const RECONNECT_MS = 1_000;

export interface Wake {
  subscribe(fn: () => void): () => void;
  close(): Promise<void>;
}

/** Opens a connection of its own (not the pool's), ready for queries. */
export type Connect = () => Promise<Client>;

/** Connections configured like `pool`'s, never taken from it, failing after `timeoutMs` rather than hanging. */
export function ownConnection(pool: Pool, timeoutMs: number): Connect {
  return async () => {
    const client = new (loadPg().Client)({ ...pool.options, connectionTimeoutMillis: timeoutMs });
    await client.connect().catch(async (error: unknown) => {
      await client.end().catch(() => undefined);
      throw error;
    });
    return client;
  };
}

export function wakeChannel(connect: Connect, channel: string, tenant: string): Wake {
  const listeners = new Set<() => void>();
  let client: Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const notify = (message: { channel: string; payload?: string | undefined }): void => {
    if (message.channel !== channel || (message.payload ?? '') !== tenant) return;
    for (const fn of [...listeners]) fn();
  };

  const onError = (): void => {
    if (client !== undefined) drop(client);
  };

  /** Closes the connection (it may be broken) and listens again later if anyone still subscribes. */
  const drop = (held: Client): void => {
    if (client !== held) return;
    client = undefined;
    detach(held);
    held.end().catch(() => undefined);
    if (!closed && listeners.size > 0) {
      retry = setTimeout(() => {
        retry = undefined;
        void listen();
      }, RECONNECT_MS);
      retry.unref?.();
    }
  };

  /** No notification may reach us from a connection we let go. */
  function detach(held: Client): void {
    held.removeListener('notification', notify);
    held.removeListener('error', onError);
  }

  function listen(): Promise<void> {
    if (client !== undefined || closed) return Promise.resolve();
    connecting ??= (async () => {
      try {
        const held = await connect();
        held.on('notification', notify);
        held.on('error', onError);
        client = held;
        if (closed) {
          drop(held);
          return;
        }
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
    await held.end().catch(() => undefined);
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
