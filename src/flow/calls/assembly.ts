/**
 * The working parts of a client: store placement, transport (fetch, or the platform's), admission,
 * loops and remediation, built from its checked options as `createClient`
 * returns (client.ts).
 */
import type { Emitter } from '../../events.js';
import type { OperationRecord } from '../../model.js';
import type { EndpointTable } from '../../options.js';
import { HostGates } from '../../policy/lazy-gate.js';
import type { Runtime } from '../../runtime.js';
import type { MemoryStoreOptions } from '../../store/memory-core.js';
import type { OperationStore, QuarantineEntry, RecordFilter } from '../../store/store.js';
import { trackedStore } from '../../store/tracked.js';
import { prefetchLaterRound } from '../drive/later-round-load.js';
import { type Dispatch, Loops } from '../drive/loops.js';
import { navigatorConnectivity } from '../engine/connectivity.js';
import type { AttemptContext, Connectivity, Engine } from '../engine/engine.js';
import { LeaseWatch } from '../engine/lease-watch.js';
import { placedStore } from '../engine/placement.js';
import type { Shutdown } from '../engine/shutdown.js';
import { ALWAYS_DENIED_HEADERS, type OncelyRequest } from '../request/operation.js';
import { defaultTransport, type Transport } from '../transport/transport.js';
import { Admission } from './admission.js';
import type { ClientCore } from './core.js';
import { lazy } from './lazy.js';
import type { SettleOutcome } from './reconcile.js';
import { RECONCILE_KIT } from './reconcile-kit.js';
import { Remediation } from './remediation.js';
import type { ResumeSummary } from './resume.js';
import { RESUME_KIT } from './resume-kit.js';
import type { ResumePassOptions } from './resume-pass.js';
import { enqueue, send } from './send.js';
import type { Outcome, SendResult } from './settle.js';
import { beforeSending } from './store-failure.js';

/** The client options these parts use (already checked by `validateClientOptions`). */
export interface AssemblyOptions {
  baseUrl?: string | undefined;
  store?: OperationStore | undefined;
  fetch?: typeof globalThis.fetch | undefined;
  headers?: ((ctx: AttemptContext) => Record<string, string> | Promise<Record<string, string>>) | undefined;
  onUnauthorized?: ((ctx: AttemptContext) => void | Promise<void>) | undefined;
  deniedHeaders?: string[] | undefined;
  resultHeaders?: string[] | undefined;
  leaseMs?: number | undefined;
  concurrency?: number | undefined;
  sweepIntervalMs?: number | undefined;
  connectivity?: Connectivity | undefined;
  dispatch?: Dispatch | undefined;
  mayAttempt?: ((record: OperationRecord) => boolean) | undefined;
}

/** What the client's shell built synchronously and shares with these parts. */
export interface Shell {
  runtime: Runtime;
  owner: string;
  endpoints: EndpointTable;
  events: Emitter;
  shutdown: Shutdown;
  /** A platform's transport around the fetch one (`oncely/node`: node:http); only without a `fetch` option. */
  transport?: ((viaFetch: Transport) => Transport) | undefined;
  /** Makes a memory store: where records kept in memory only live (flow/engine/placement.ts). */
  memoryStore: (options: MemoryStoreOptions) => OperationStore | Promise<OperationStore>;
}

/** The client's calls that need the engine; `close` after `shutdown.stop()`. */
export interface ClientParts {
  send<T>(request: OncelyRequest<T>): Promise<SendResult<T>>;
  enqueue<T>(request: OncelyRequest<T>): Promise<{ key: string; settled: Promise<Outcome<T>> }>;
  resume(options: ResumePassOptions): Promise<ResumeSummary>;
  get(key: string): Promise<OperationRecord | undefined>;
  list(filter?: RecordFilter): Promise<OperationRecord[]>;
  quarantined(): Promise<QuarantineEntry[]>;
  retry(key: string): Promise<Outcome>;
  discard(key: string, force: boolean): Promise<void>;
  sweep(): Promise<number>;
  reconcile(key: string): Promise<Outcome>;
  settle(key: string, outcome: SettleOutcome): Promise<Outcome>;
  close(): Promise<void>;
}

/** `own`: the client's store (its `store` option, or the platform's memory store). */
export function assemble(options: AssemblyOptions, shell: Shell, own: OperationStore): ClientParts {
  const { runtime, events, endpoints, shutdown } = shell;
  // Loaded on first use: a client whose rules have no `reconcile` hook, and that never settles, never loads it.
  const reconciling = lazy(() => import('./reconcile.js'), runtime);
  // Loaded on the first `resume()` (resume-call.ts and the pass it runs): the browser's drain loop calls it only once it finds due work (or is asked to
  // drain), so a page whose store holds nothing open sends without it. A failed load rejects that `resume()`; the
  // operations stay stored and the next pass loads it again.
  const resuming = lazy(() => import('./resume-call.js'), runtime);
  // The memory store's make is reported to the runtime as real work (the browser's loads its code then).
  const store = placedStore(trackedStore(own, runtime), () =>
    runtime.track(Promise.resolve(shell.memoryStore({ now: runtime.now }))),
  );
  store.onQuarantine((entry) => events.emit('quarantined', { id: entry.id, problems: entry.problems }));
  const engine: Engine = {
    store,
    runtime,
    owner: { id: shell.owner, leaseMs: options.leaseMs ?? 30_000 },
    http: transportOf(options, shell),
    endpoints,
    hostGates: new HostGates(),
    events,
    credentials: options.headers,
    onUnauthorized: options.onUnauthorized,
    resultHeaders: options.resultHeaders ?? [],
    shutdown,
    pollMs: 1_000,
    connectivity: options.connectivity ?? navigatorConnectivity(),
    mayAttempt: options.mayAttempt,
    leases: new LeaseWatch(runtime),
    reconcileStopped: async (record, rule) => (await reconciling()).checkStopped(RECONCILE_KIT, core, record, rule),
  };
  // Every attempt of a client with a `headers` callback calls it in a later round (start-at-once.ts): loaded now.
  if (options.headers !== undefined) prefetchLaterRound(runtime);
  const denied = new Set([...ALWAYS_DENIED_HEADERS, ...(options.deniedHeaders ?? []).map((h) => h.toLowerCase())]);
  const loops = new Loops(engine, options.dispatch);
  const remediation = new Remediation(engine, loops, options.sweepIntervalMs);
  const core: ClientCore = {
    engine,
    admission: new Admission(engine, loops, options.baseUrl, denied),
    loops,
    remediation,
    concurrency: options.concurrency ?? 8,
  };
  return {
    send: (request) => send(core, request),
    enqueue: (request) => enqueue(core, request),
    resume: async (resumeOptions) => {
      const { resumeCall } = await resuming();
      const summary = await resumeCall(RESUME_KIT, beforeSending, core, resumeOptions);
      // Rechecks of `unknown` operations whose time has come (flow/calls/reconcile.ts).
      if (endpoints.reconciles && !shutdown.stopped) await (await reconciling()).recheckDue(RECONCILE_KIT, core);
      return summary;
    },
    get: (key) => beforeSending(key, store.get(key)),
    list: (filter) => beforeSending(undefined, store.list(filter)),
    quarantined: () => beforeSending(undefined, store.quarantined()),
    retry: (key) => remediation.retry(key),
    discard: (key, force) => remediation.discard(key, force),
    sweep: () => remediation.sweep(),
    reconcile: async (key) => (await reconciling()).reconcile(RECONCILE_KIT, core, key),
    settle: async (key, outcome) => (await reconciling()).settle(RECONCILE_KIT, core, key, outcome),
    async close() {
      await loops.ended();
      await remediation.idle();
      // A store passed in belongs to the caller (it may be shared); only close our own.
      if (options.store === undefined) await store.close?.();
    },
  };
}

/**
 * `fetch` (the one passed in, else the global, looked up per request), or
 * the platform's transport around it. A `fetch` passed in is the caller's
 * choice: every request goes through it.
 */
function transportOf(options: AssemblyOptions, shell: Shell): Transport {
  const viaFetch = defaultTransport(() => options.fetch ?? globalThis.fetch);
  return options.fetch === undefined && shell.transport !== undefined ? shell.transport(viaFetch) : viaFetch;
}
