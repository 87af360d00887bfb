/**
 * Public types of the server conformance kit (`serverConformance`).
 */

export interface ServerConformanceOptions {
  /**
   * The guarded endpoint, e.g. `http://127.0.0.1:3000/payments`. Every check
   * sends it real requests (with fresh keys), so point it at a test instance:
   * each check performs at most a few effects.
   */
  url: string;
  /** @default 'POST' */
  method?: string;
  /**
   * A request body for the `n`-th operation: a JSON object with at least two
   * fields (one check reorders them). Each operation gets a new `n`.
   * @default (n) => ({ amount: 100 + n, currency: 'eur' })
   */
  body?: (n: number) => Record<string, unknown>;
  /** Headers of every request (credentials of the first caller). @default {} */
  headers?: Record<string, string>;
  /**
   * Headers of a second caller: the `scope` check sends the first caller's
   * key as this one. Without it that check is skipped.
   */
  otherCaller?: Record<string, string>;
  /** @default 'Idempotency-Key' */
  keyHeader?: string;
  /** The server's key length limit: a key one longer must be refused. @default 255 */
  maxKeyLength?: number;
  /** Duplicates fired at once by the `atomic-claim` check. @default 10 */
  concurrency?: number;
  /**
   * Moves the server's clock on (its leases and retention). Needed by the
   * `retention` and `outcome-unknown` checks, skipped without it.
   */
  advanceTime?: (ms: number) => Promise<void>;
  /** The route's retention; with `advanceTime`, a key is reused after it. */
  retentionMs?: number;
  /**
   * A body the handler never answers (it stalls after its effect, as a
   * process that died would), and the route's lease: the `outcome-unknown`
   * check claims a key with it, moves time past the lease and retries.
   */
  stall?: { body: Record<string, unknown>; leaseMs: number };
  /** Counts the endpoint's effects so far (a ledger, a table): makes `atomic-claim` count them too. */
  effects?: () => Promise<number>;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

export type CheckStatus = 'pass' | 'fail' | 'skipped';

export interface ConformanceCheck {
  /** The rule's name in the contract (docs/server.md), e.g. `fingerprint-mismatch`. */
  rule: string;
  title: string;
  status: CheckStatus;
  /** What was seen (on failure: what was expected instead); for skips, what to give. */
  detail: string;
}

export interface ConformanceReport {
  /** No check failed (skipped ones do not count). */
  passed: boolean;
  checks: ConformanceCheck[];
  /** Rules that failed, for a one-line assertion. */
  failed: string[];
}
