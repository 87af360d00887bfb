/**
 * oncely/testing — tools for testing code that uses oncely (and oncely
 * itself): a fake runtime, the store contract suite, and a reference
 * idempotent HTTP server with fault injection (Node only).
 */

export type { ContractCase, StoreContractOptions } from './store/contract.js';
export { sampleRecord, storeContract } from './store/contract.js';
export type { FakeRuntime, FakeRuntimeOptions, RunOptions } from './testing/fake-runtime.js';
export { createFakeRuntime, seededRandom } from './testing/fake-runtime.js';
export * from './testing/reference-server.js';
