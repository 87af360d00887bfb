/**
 * The composition root, in two steps. Synchronously: the options are
 * checked (a bad value throws here, naming the field), the endpoint rules,
 * events, owner id and shutdown switch are made, so `on`, `policyFor` and
 * construction errors need nothing more. The working parts (store
 * placement, transport, admission, loops, remediation: flow/calls/assembly.ts)
 * are built once, behind one promise that every call waiting for them
 * shares, so calls reach admission in the order they were made and a part
 * that fails to build fails the call that needs it. They are bundled with
 * the client, not loaded with `import()`: a page that creates the client
 * needs them before its first send anyway, and a separate chunk cost it a
 * second round of requests and ~2 KB gzip of chunk boundaries.
 * Nothing here decides or writes a record; see flow/.
 */
import type { ClientOptions, OncelyClient } from './client-api.js';
import { validateClientOptions } from './client-api.js';
import { isOncelyError } from './errors.js';
import { Emitter } from './events.js';
import { assemble } from './flow/calls/assembly.js';
import { lazy } from './flow/calls/lazy.js';
import { Shutdown } from './flow/engine/shutdown.js';
import { parseBase, pathWithinBase, resolveUrl } from './flow/request/target.js';
import type { Transport } from './flow/transport/transport.js';
import { EndpointTable, validatePolicy } from './options.js';
import { type Runtime, systemRuntime } from './runtime.js';
import { memoryStore } from './store/memory.js';
import type { MemoryStoreOptions } from './store/memory-core.js';
import type { OperationStore } from './store/store.js';

export type {
  ClientOptions,
  DiscardOptions,
  Enqueued,
  OncelyClient,
  Outcome,
  ResumeOptions,
  SendResult,
  SettleOutcome,
} from './client-api.js';

export type { ResumeSummary } from './flow/calls/resume.js';

/**
 * Creates a client. Invalid options throw `InvalidOptionsError` naming the field.
 *
 * @example
 * const client = createClient({ baseUrl: 'https://api.example.com', endpoints: { 'POST /payments': { profile: 'stripe' } } });
 * const payment = await client.send({ method: 'POST', url: '/payments', json: { amount: 4800, currency: 'EUR' } });
 */
export function createClient(options: ClientOptions = {}): OncelyClient {
  return createPlatformClient(options, { memoryStore });
}

/**
 * What a platform entry adds to the universal client: `oncely/node` its
 * node:http transport (src/node/transport-choice.ts). Internal: not exported
 * from any entry.
 */
export interface ClientPlatform {
  /** The transport, given the fetch transport to hand requests to; used only when no `fetch` option was passed. */
  transport?: ((viaFetch: Transport) => Transport) | undefined;
  /**
   * Makes a memory store: the client's store when no `store` option is
   * given, and where records kept in memory only live
   * (flow/engine/placement.ts). `memoryStore` itself, or, in the browser's
   * clients (which always have a store), its code loaded with `import()`
   * when a first record is kept there (store/memory-load.ts).
   */
  memoryStore: (options: MemoryStoreOptions) => OperationStore | Promise<OperationStore>;
}

/** `createClient` with a platform's parts (internal: `oncely/node` calls it). */
export function createPlatformClient(options: ClientOptions, platform: ClientPlatform): OncelyClient {
  validateClientOptions(options);
  const defaults = validatePolicy(options.policy ?? {}, 'policy');
  const endpoints = new EndpointTable(defaults, options.endpoints ?? {});
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  const events = new Emitter();
  const shutdown = new Shutdown();
  const shell = {
    runtime,
    owner: options.owner ?? runtime.uuid(),
    endpoints,
    events,
    shutdown,
    transport: platform.transport,
    memoryStore: platform.memoryStore,
  };
  const base = parseBase(options.baseUrl);

  const parts = lazy(
    async () => assemble(options, shell, options.store ?? (await platform.memoryStore({ now: runtime.now }))),
    runtime,
  );
  // Built now; a failure here is tried again (and surfaces) on the first call that needs them.
  parts().catch(() => undefined);

  return {
    send: async (request) => (await parts()).send(request),
    enqueue: async (request) => (await parts()).enqueue(request),
    resume: async (resumeOptions = {}) => (await parts()).resume(resumeOptions),
    get: async (key) => (await parts()).get(key),
    list: async (filter) => (await parts()).list(filter),
    quarantined: async () => (await parts()).quarantined(),
    retry: async (key) => (await parts()).retry(key),
    discard: async (key, discardOptions = {}) => (await parts()).discard(key, discardOptions.force === true),
    sweep: async () => (await parts()).sweep(),
    reconcile: async (key) => (await parts()).reconcile(key),
    settle: async (key, outcome) => (await parts()).settle(key, outcome),
    on: (event, fn) => events.on(event, fn),
    policyFor: (method, url) => {
      const target = resolveUrl(url, options.baseUrl);
      return endpoints.resolve(method, target, pathWithinBase(target, base));
    },
    async close() {
      shutdown.stop();
      // Parts that failed to build hold nothing: no loop ran and no store of ours was opened. Parts still
      // being built are awaited (with the shutdown already stopped, no loop starts) so that a store of ours is closed.
      await (await parts().catch(() => undefined))?.close();
    },
  };
}

export { isOncelyError };
