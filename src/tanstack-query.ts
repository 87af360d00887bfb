/**
 * oncely/tanstack-query — oncely under TanStack Query (any adapter: React,
 * Vue, Solid, Svelte, Angular). oncely owns durability (the key written
 * ahead, reused on every retry, across reloads); TanStack owns the UI state.
 *
 * - `mutationOptions(client, { method, url, … })`: a mutation that sends
 *   through oncely, with TanStack's own retries and offline pausing off.
 * - `outboxQueryOptions(client, filter?)`: the operations not yet done, as
 *   a query kept live from the client.
 * - `createMutationHandlers(client)`: callbacks by mutation key that run
 *   for operations that settle after a reload, when closures are gone.
 *
 * `@tanstack/query-core` is an optional peer dependency: only its types are
 * used, so this entry adds nothing to a bundle but its own code.
 */

export type { OperationView } from './browser/subscribe.js';
export type {
  MutationHandlerRegistry,
  MutationHandlerRegistryOptions,
  MutationHandlers,
  SettledContext,
} from './tanstack-query/handlers.js';
export { createMutationHandlers } from './tanstack-query/handlers.js';
export type {
  FromVariables,
  OncelyMutationError,
  OncelyMutationOptions,
  OncelyMutationSpec,
} from './tanstack-query/mutation.js';
export { mutationOptions } from './tanstack-query/mutation.js';
export type { MutationKey } from './tanstack-query/mutation-key.js';
export type { Outbox, OutboxFilter, OutboxQueryOptions } from './tanstack-query/outbox.js';
export { OUTBOX_STATES, outboxQueryOptions } from './tanstack-query/outbox.js';
