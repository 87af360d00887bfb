/**
 * oncely/testing — tools for testing code that uses oncely (and oncely
 * itself): a fake runtime with virtual time, and a reference idempotent HTTP
 * server with fault injection (Node only), and the server conformance kit
 * (`serverConformance`: the server half's contract, checked against any
 * endpoint). The store contract suite is in
 * `oncely/store`, with the rest of what a store author needs.
 */

export { CONFORMANCE_RULES, serverConformance } from './testing/conformance/run.js';
export type {
  CheckStatus,
  ConformanceCheck,
  ConformanceReport,
  ServerConformanceOptions,
} from './testing/conformance/types.js';
export type { FakeRuntime, FakeRuntimeOptions, RunOptions } from './testing/fake-runtime.js';
export { createFakeRuntime, seededRandom } from './testing/fake-runtime.js';
export * from './testing/reference-server.js';
