/**
 * What the checkout page and the demo server say to each other, besides the
 * payments themselves (those go straight to the reference server): the
 * page's configuration, the "fail next responses" control, the ledger, and
 * the payments looked up by reference (what a reconcile hook asks).
 * Plain data, no imports: bundled into the page and used by the server.
 */

/** The endpoint the page pays through (on the reference server). */
export const PAYMENTS_PATH = '/payments';

/** What "fail next responses" can do to a payment, as the page offers it. */
export const FAILURES = {
  'drop-after-commit': 'Charge, then lose the response',
  'reset-after-commit': 'Charge, then reset the connection',
  'reset-before-commit': 'Reset the connection before charging',
  'status-503': 'Answer 503 with Retry-After: 1',
  unknown: 'Charge, then lose every answer: the client ends unknown',
} as const;

export type FailureKind = keyof typeof FAILURES;

export function isFailureKind(value: unknown): value is FailureKind {
  return typeof value === 'string' && Object.hasOwn(FAILURES, value);
}

/** At most this many failures are armed by one request. */
export const MAX_FAILURES = 10;

/** `GET /config.json` */
export interface DemoConfig {
  /** The reference server's origin, e.g. `http://127.0.0.1:41234`. */
  api: string;
  /** Changes with every start of the demo server (names the page's database). */
  run: string;
}

/** `POST /control/fail` */
export interface FailRequest {
  kind: FailureKind;
  /** How many of the next payment responses fail. */
  count: number;
}

/** One request the reference server saw for a key. */
export interface LedgerRequestView {
  at: number;
  outcome: string;
  status: number | undefined;
  /** The scripted failure applied to it. */
  fault: string | undefined;
}

/** `GET /control/ledger` (and the answer to `POST /control/fail`). */
export interface LedgerView {
  /** Every key the server saw, first seen first. */
  keys: Array<{ key: string; effects: number; requests: LedgerRequestView[] }>;
  /** Business effects (charges) in all. */
  totalEffects: number;
  /** Requests that reached the server (CORS preflights aside). */
  requests: number;
  /** Failures armed and not yet used by a request. */
  armed: number;
}

/** `GET /control/payments?reference=…`: the provider's search by the reference stamped into a payment. */
export const PAYMENTS_LOOKUP_PATH = '/control/payments';

/** The answer of `GET /control/payments?reference=…`. */
export type PaymentLookup = { found: false } | { found: true; payment: { id: string } & Record<string, unknown> };
