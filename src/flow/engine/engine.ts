/**
 * flow/engine/: what the loop works with, built once per client: this
 * Engine, the placed store, the lease watch, the stop switch, the default
 * connectivity. It may import flow/request/, flow/decide/ and
 * flow/transport/; never the loop (flow/drive/) nor the calls.
 *
 * What the loop works with: the store, the runtime, the lease owner, the
 * transport, the rules, the gates, the events and the hooks. Built once per
 * client (client.ts) and passed to every stage of the flow.
 */

import type { Emitter } from '../../events.js';
import type { OperationRecord } from '../../model.js';
import type { EndpointTable, ResolvedPolicy } from '../../options.js';
import type { HostGates } from '../../policy/lazy-gate.js';
import type { Runtime } from '../../runtime.js';
import type { Owner } from '../decide/transitions.js';
import type { Transport } from '../transport/transport.js';
import type { LeaseWatch } from './lease-watch.js';
import type { PlacedStore } from './placement.js';
import type { Shutdown } from './shutdown.js';

/** Context passed to the `headers` and `onUnauthorized` callbacks. */
export interface AttemptContext {
  key: string;
  /** 1-based number of the attempt about to be sent. */
  attempt: number;
  method: string;
  url: string;
  meta: Readonly<Record<string, unknown>> | undefined;
}

export interface Engine {
  /** The client's store, and memory for operations that are not written ahead (flow/engine/placement.ts). */
  store: PlacedStore;
  runtime: Runtime;
  owner: Owner;
  http: Transport;
  endpoints: EndpointTable;
  /** The outage gate of each host (policy/gate.ts). */
  hostGates: HostGates;
  events: Emitter;
  /** Credentials for one attempt (never stored). */
  credentials: ((ctx: AttemptContext) => Record<string, string> | Promise<Record<string, string>>) | undefined;
  onUnauthorized: ((ctx: AttemptContext) => void | Promise<void>) | undefined;
  /** Extra response headers to keep in stored results. */
  resultHeaders: readonly string[];
  /** Aborted when the client closes: loops suspend (records stay pending). */
  shutdown: Shutdown;
  /** How often to look again at an operation another owner holds. */
  pollMs: number;
  /** Platform connectivity, when known (browsers): no attempt is made while offline. */
  connectivity: Connectivity | undefined;
  /** Judges other owners' leases on our monotonic clock (flow/engine/lease-watch.ts). */
  leases: LeaseWatch;
  /** Whether the platform lets `record` be attempted now (the `mayAttempt` option); undefined: always. */
  mayAttempt: ((record: OperationRecord) => boolean) | undefined;
  /**
   * Asks `rule`'s `reconcile` hook about an operation the loop has just
   * stopped `unknown` (flow/drive/reconcile.ts, which the client loads on
   * first use, so that clients without a hook never load it).
   */
  reconcileStopped?: (record: OperationRecord, rule: ResolvedPolicy) => Promise<OperationRecord>;
}

/**
 * What the platform knows about the network. While `online()` is false no
 * attempt is made (and none is counted); the operation waits for `onOnline`
 * or its deadline.
 */
export interface Connectivity {
  online(): boolean;
  /** Calls `fn` when the platform may be back online. Returns an unsubscribe. */
  onOnline(fn: () => void): () => void;
}
