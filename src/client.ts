/**
 * The composition root: options → transport (ky, retry 0) → store + runtime →
 * engine → the client's parts (admission, loops, remediation), and a client
 * object whose methods hand each call to the part that does it. Nothing
 * here decides or writes a record; see flow/.
 */
import type { ClientOptions, OncelyClient } from './client-api.js';
import { validateClientOptions } from './client-api.js';
import { isOncelyError } from './errors.js';
import { Emitter } from './events.js';
import { Admission } from './flow/admission.js';
import { navigatorConnectivity } from './flow/connectivity.js';
import type { ClientCore } from './flow/core.js';
import type { Engine } from './flow/engine.js';
import { LeaseWatch } from './flow/lease-watch.js';
import { Loops } from './flow/loops.js';
import { ALWAYS_DENIED_HEADERS } from './flow/operation.js';
import { placedStore } from './flow/placement.js';
import { Remediation } from './flow/remediation.js';
import { resumePass } from './flow/resume-pass.js';
import { enqueue, send } from './flow/send.js';
import { Shutdown } from './flow/shutdown.js';
import { parseBase, pathWithinBase, resolveUrl } from './flow/target.js';
import { defaultTransport } from './flow/transport.js';
import { EndpointTable, validatePolicy } from './options.js';
import { HostGates } from './policy/gate.js';
import { type Runtime, systemRuntime } from './runtime.js';
import { memoryStore } from './store/memory.js';
import { trackedStore } from './store/tracked.js';

export type {
  ClientOptions,
  DiscardOptions,
  Enqueued,
  OncelyClient,
  Outcome,
  ResumeOptions,
  SendResult,
} from './client-api.js';

export type { ResumeSummary } from './flow/resume.js';

/**
 * Creates a client. Invalid options throw `InvalidOptionsError` naming the field.
 *
 * @example
 * const client = createClient({ baseUrl: 'https://api.example.com', endpoints: { 'POST /payments': { profile: 'stripe' } } });
 * const payment = await client.send({ method: 'POST', url: '/payments', json: { amount: 4800, currency: 'EUR' } });
 */
export function createClient(options: ClientOptions = {}): OncelyClient {
  validateClientOptions(options);
  const engine = engineFor(options);
  const { store, events, endpoints, shutdown } = engine;
  store.onQuarantine((entry) => events.emit('quarantined', { id: entry.id, problems: entry.problems }));
  const denied = new Set([...ALWAYS_DENIED_HEADERS, ...(options.deniedHeaders ?? []).map((h) => h.toLowerCase())]);
  const loops = new Loops(engine, options.dispatch);
  const remediation = new Remediation(engine, loops, options.sweepIntervalMs);
  const base = parseBase(options.baseUrl);
  const core: ClientCore = {
    engine,
    admission: new Admission(engine, options.baseUrl, denied),
    loops,
    remediation,
    concurrency: options.concurrency ?? 8,
  };

  return {
    send: (request) => send(core, request),
    enqueue: (request) => enqueue(core, request),
    resume: (resumeOptions = {}) => resumePass(core, resumeOptions),
    get: (key) => store.get(key),
    list: (filter) => store.list(filter),
    quarantined: () => store.quarantined(),
    retry: (key) => remediation.retry(key),
    discard: (key, discardOptions = {}) => remediation.discard(key, discardOptions.force === true),
    sweep: () => remediation.sweep(),
    on: (event, fn) => events.on(event, fn),
    policyFor: (method, url) => {
      const target = resolveUrl(url, options.baseUrl);
      return endpoints.resolve(method, target, pathWithinBase(target, base));
    },
    async close() {
      shutdown.stop();
      await loops.ended();
      await remediation.idle();
      // A store passed in belongs to the caller (it may be shared); only close our own.
      if (options.store === undefined) await store.close?.();
    },
  };
}

/** The loop's working set for one client, from its (validated) options. */
function engineFor(options: ClientOptions): Engine {
  const defaults = validatePolicy(options.policy ?? {}, 'policy');
  const endpoints = new EndpointTable(defaults, options.endpoints ?? {});
  const runtime: Runtime = { ...systemRuntime, ...options.runtime };
  return {
    store: placedStore(trackedStore(options.store ?? memoryStore({ now: runtime.now }), runtime), runtime.now),
    runtime,
    owner: { id: options.owner ?? runtime.uuid(), leaseMs: options.leaseMs ?? 30_000 },
    http: defaultTransport(() => options.fetch ?? globalThis.fetch),
    endpoints,
    hostGates: new HostGates(),
    events: new Emitter(),
    credentials: options.headers,
    onUnauthorized: options.onUnauthorized,
    resultHeaders: options.resultHeaders ?? [],
    shutdown: new Shutdown(),
    pollMs: 1_000,
    connectivity: options.connectivity ?? navigatorConnectivity(),
    leases: new LeaseWatch(runtime),
  };
}

export { isOncelyError };
