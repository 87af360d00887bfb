/**
 * Public types of the reference idempotent HTTP server.
 *
 * They live in their own module so the ledger, fault queue and server can
 * share them without importing each other.
 */

/** What the business handler sees for a request that performs an effect. */
export interface ReferenceRequest {
  method: string;
  /** Path including the query string, exactly as the client sent it. */
  path: string;
  /** Parsed JSON when the body is JSON, the raw text otherwise, `undefined` when empty. */
  body: unknown;
  key: string | undefined;
  /** 1-based number of this business effect since start (or the last `reset()`). */
  effectNumber: number;
}

/** What the business handler answers; `body` is sent as JSON. */
export interface ReferenceResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What the reference server needs of a test runtime. */
export interface ServerRuntime {
  now(): number;
  sleep(ms: number): Promise<void>;
  park?(requestId: string | undefined, until: Promise<unknown>): void;
}

export interface ReferenceServerOptions {
  /** Default 0: the OS picks a free port, so parallel test files never collide. */
  port?: number;
  /** Default 'Idempotency-Key'; matched case-insensitively as HTTP requires. */
  keyHeader?: string;
  /** Error body/status dialect. Default 'ietf'. */
  profile?: 'ietf' | 'stripe';
  /** Default 24h. A key older than this is forgotten, so reusing it is new work. */
  keyRetentionMs?: number;
  /** Clock for retention, ledger timestamps and outage windows. Default `runtime.now`, else `Date.now`. */
  now?: () => number;
  /**
   * A test runtime (`createFakeRuntime()`): scripted delays sleep in its
   * virtual time, and delays and holds park the request they keep waiting
   * (`runtime.park`), so virtual time may move while the server holds a
   * request on purpose, and never while it is doing real work.
   * @default real time
   */
  runtime?: ServerRuntime;
  /** Default true: POST/PATCH without a key are rejected with 400. */
  requireKey?: boolean;
  /** When given and it returns false the request is rejected with 401 before any effect. */
  authorize?: (authorization: string | undefined) => boolean;
  /**
   * The business effect. May return a promise, which is how a test widens the
   * in-progress window to provoke 409s. Default: 201 `{ id: 'res_N', ...jsonBody }`.
   */
  handle?: (req: ReferenceRequest) => ReferenceResponse | Promise<ReferenceResponse>;
}

export interface FaultMatch {
  key?: string;
  path?: string;
  method?: string;
}

export type Fault = { match?: FaultMatch } & (
  | { kind: 'drop-after-commit' }
  | { kind: 'reset-after-commit' }
  | { kind: 'reset-before-commit' }
  | { kind: 'delay'; ms: number }
  | {
      kind: 'status';
      status: number;
      retryAfter?: number | Date | string;
      headers?: Record<string, string>;
      body?: unknown;
    }
);

export type FaultKind = Fault['kind'];

export interface Outage {
  status: number;
  retryAfter?: number | Date | string;
  /** `now()` value at which the outage ends by itself. */
  until?: number;
}

export type LedgerOutcome =
  | 'effect'
  | 'replay'
  | 'in_progress'
  | 'mismatch'
  | 'missing_key'
  | 'unauthorized'
  | 'fault'
  | 'outage'
  | 'expired_new'
  /** GET/HEAD: answered without any effect. */
  | 'read'
  /** The handler answered >= 500 or threw: nothing was stored and the key was released. */
  | 'failed';

export interface LedgerEntry {
  at: number;
  method: string;
  path: string;
  key: string | undefined;
  fingerprint: string | undefined;
  outcome: LedgerOutcome;
  /** The status sent, or that would have been sent when a fault swallowed the response. */
  status: number | undefined;
  /** The scripted fault applied to this request, if any. */
  fault?: FaultKind;
}

export interface Ledger {
  readonly requests: readonly LedgerEntry[];
  /** key → number of business effects performed. The proof of exactly-once is a 1 here. */
  readonly effects: ReadonlyMap<string, number>;
  effectCount(key: string): number;
  /** All effects, including those of keyless PUT/DELETE (or POST with `requireKey: false`). */
  totalEffects(): number;
  /** Highest number of simultaneously in-flight requests seen for one key (or for `key`). */
  maxConcurrent(key?: string): number;
  requestsFor(key: string): LedgerEntry[];
}

export interface Hold {
  release(): void;
  /** Resolves once the held request has committed and is waiting for `release()`. */
  arrived: Promise<void>;
}

export interface ReferenceServer {
  /** 'http://127.0.0.1:PORT' */
  url: string;
  port: number;
  ledger: Ledger;
  /** Queue one-shot faults, each consumed by the first matching request. */
  script(...faults: Fault[]): void;
  /** While set, every non-OPTIONS request is answered with `outage.status` and no effect. */
  setOutage(outage: Outage | undefined): void;
  /** Hold the next committed request (optionally: the next matching one) until `release()`. */
  hold(match?: FaultMatch): Hold;
  /** Resolves once at least `n` non-OPTIONS requests have been fully received. */
  waitForRequests(n: number): Promise<void>;
  /** Clears keys, ledger, faults, pending holds and the outage. */
  reset(): void;
  /** Closes the server and destroys every open socket, held and dropped ones too. */
  close(): Promise<void>;
}
