/**
 * Reference idempotent HTTP server shipped in `oncely/testing`.
 *
 * It implements the Idempotency-Key contract (draft-ietf-httpapi-idempotency-key-header
 * and Stripe's dialect) on a real `node:http` socket, keeps a ledger of every
 * business effect as proof of exactly-once, and injects scripted network
 * faults so retry logic can be tested against real failures, not mocks.
 */
export { startReferenceServer } from './reference-server/server.js';
export type {
  Fault,
  FaultKind,
  FaultMatch,
  Hold,
  Ledger,
  LedgerEntry,
  LedgerOutcome,
  Outage,
  ReferenceRequest,
  ReferenceResponse,
  ReferenceServer,
  ReferenceServerOptions,
} from './reference-server/types.js';
