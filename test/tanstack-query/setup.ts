/**
 * What the adapter's tests share: a core client on a real file store and a
 * real reference server on 127.0.0.1, on a fake runtime (virtual time for
 * retry delays), with a network switch the test turns (`connectivity`).
 */
import type { Connectivity } from '../../src/index.js';
import { createClient, type OncelyClient } from '../../src/node.js';
import { createFakeRuntime, type FakeRuntime, type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

export interface Switch extends Connectivity {
  set(online: boolean): void;
}

/** A network switch: while off, the client makes no attempt; turning it on wakes the client. */
export function networkSwitch(online = true): Switch {
  let state = online;
  const listeners = new Set<() => void>();
  return {
    online: () => state,
    onOnline(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    set(next) {
      state = next;
      if (next) for (const fn of [...listeners]) fn();
    },
  };
}

export interface Setup {
  rt: FakeRuntime;
  server: ReferenceServer;
  /** The file store's directory (a second client on it is the app after a restart). */
  dir: string;
  network: Switch;
  client: OncelyClient;
  /** Another client on the same directory and server (the app started again). */
  restart(): OncelyClient;
  close(): Promise<void>;
}

export const QUICK_POLICY = { attemptTimeoutMs: 2_000, backoff: { baseDelayMs: 10, maxDelayMs: 100 } };

export async function setup(options: { online?: boolean; maxAttempts?: number } = {}): Promise<Setup> {
  const rt = createFakeRuntime();
  const server = await startReferenceServer({ runtime: rt });
  const dir = tempDir('oncely-tanstack-');
  const network = networkSwitch(options.online ?? true);
  const clients: OncelyClient[] = [];
  const stores: Array<ReturnType<typeof fileStore>> = [];
  const make = (connectivity: Connectivity = network): OncelyClient => {
    const store = fileStore({ dir });
    stores.push(store);
    const client = createClient({
      baseUrl: server.url,
      store,
      runtime: rt,
      fetch: rt.fetch,
      connectivity,
      policy: { ...QUICK_POLICY, ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }) },
    });
    clients.push(client);
    return client;
  };
  return {
    rt,
    server,
    dir,
    network,
    client: make(),
    restart: () => make(networkSwitch(true)),
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      // A client leaves open a store it was given.
      await Promise.all(stores.map((s) => s.close()));
      await server.close();
      removeTempDirs();
    },
  };
}
