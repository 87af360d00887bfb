/**
 * A client wired to a real reference server on 127.0.0.1 and a fake runtime:
 * real sockets, virtual time.
 */
import {
  type ClientOptions,
  createClient,
  memoryStore,
  type OncelyClient,
  type OncelyEvents,
} from '../../src/index.js';
import type { MemoryStore } from '../../src/store/memory.js';
import {
  createFakeRuntime,
  type FakeRuntime,
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from '../../src/testing.js';

export interface Harness {
  rt: FakeRuntime;
  server: ReferenceServer;
  store: MemoryStore;
  client: OncelyClient;
  events: Array<{ name: keyof OncelyEvents; payload: unknown }>;
  /** Another client on the same store and server (another tab or process). */
  another(options?: Partial<ClientOptions>): OncelyClient;
  close(): Promise<void>;
}

const open: Harness[] = [];

export async function harness(
  options: Partial<ClientOptions> = {},
  serverOptions: ReferenceServerOptions = {},
  seed = 1,
): Promise<Harness> {
  const rt = createFakeRuntime({ seed });
  const server = await startReferenceServer({ runtime: rt, ...serverOptions });
  const store = memoryStore({ now: rt.now });
  const make = (more: Partial<ClientOptions> = {}) =>
    createClient({ baseUrl: server.url, runtime: rt, fetch: rt.fetch, store, ...options, ...more });
  const client = make();
  const events: Harness['events'] = [];
  for (const name of ['enqueued', 'attempt:started', 'attempt:ended', 'retry:scheduled', 'settled', 'held'] as const) {
    client.on(name, (payload) => events.push({ name, payload }));
  }
  const clients = [client];
  const h: Harness = {
    rt,
    server,
    store,
    client,
    events,
    another(more) {
      const c = make(more);
      clients.push(c);
      return c;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    },
  };
  open.push(h);
  return h;
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((h) => h.close()));
}
