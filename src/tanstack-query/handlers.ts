/**
 * Callbacks that survive a reload. A `mutate()` call's `onSuccess` is a
 * closure: when the page reloads while the operation is queued, the closure
 * is gone, but oncely still sends the operation from its store. Handlers
 * registered here by mutation key are found again by the new page, and run
 * for every operation stamped with that key (`mutationOptions` stores it in
 * `meta.mutationKey`) when it settles, whichever page started it.
 *
 * They run where the operation is driven to its end: the client's `settled`
 * event, in the tab that sends (one tab in a browser app, the drainer), once
 * per operation. An operation a service worker settles while no page is open
 * runs none; the outbox query shows its final state to the next page.
 */
import type { QueryClient } from '@tanstack/query-core';
import type { Outcome, SendResult } from '../client-api.js';
import type { AnyOncelyError } from '../errors.js';
import { InvalidOptionsError } from '../errors.js';
import { outcomeOf } from '../flow/calls/settle.js';
import type { OperationRecord } from '../model.js';
import { checkClient } from './client.js';
import { checkMutationKey, keyText, type MutationKey, storedMutationKey } from './mutation-key.js';

/** What a handler is told besides the outcome. */
export interface SettledContext {
  /** The idempotency key of the operation. */
  key: string;
  mutationKey: MutationKey;
  /** The operation as stored when it settled (`record.meta` holds what `mutationOptions`' `meta` added). */
  record: OperationRecord | undefined;
  /** The `queryClient` given to `createMutationHandlers`, to invalidate or update queries. */
  queryClient: QueryClient | undefined;
}

export interface MutationHandlers<TData = unknown> {
  /** The operation succeeded (and its answer passed the schema, if it had one). */
  onSuccess?: (result: SendResult<TData>, context: SettledContext) => void | Promise<void>;
  /** It stopped otherwise: `error.mayHaveTakenEffect` tells a sure failure from an `unknown`. */
  onError?: (error: AnyOncelyError, context: SettledContext) => void | Promise<void>;
  /** After either. */
  onSettled?: (outcome: Outcome<TData>, context: SettledContext) => void | Promise<void>;
}

export interface MutationHandlerRegistryOptions {
  /**
   * Handed to every handler (`context.queryClient`), e.g. to invalidate queries.
   * @default none
   */
  queryClient?: QueryClient;
  /**
   * Called when a handler throws or rejects (the operation has settled all
   * the same).
   * @default console.error
   */
  onError?: (error: unknown, context: SettledContext) => void;
}

export interface MutationHandlerRegistry {
  /**
   * Registers `handlers` for operations started under `mutationKey`; at most
   * one set per key (a second replaces the first). Returns an unregister.
   * @example handlers.register(['pay'], { onSuccess: (r) => toast(`Paid (${r.key})`) })
   */
  register<TData = unknown>(mutationKey: MutationKey, handlers: MutationHandlers<TData>): () => void;
  /** Stops listening to the client. */
  close(): void;
}

/**
 * A handler registry on `client`. Create it as the app starts, right after
 * the client and before anything is awaited, so that it hears operations a
 * previous page left queued: the client starts sending them at once.
 *
 * @example
 * const client = createBrowserClient({ baseUrl: '/api' });
 * const handlers = createMutationHandlers(client, { queryClient });
 * handlers.register(['pay'], { onSuccess: () => queryClient.invalidateQueries({ queryKey: ['orders'] }) });
 */
export function createMutationHandlers(
  client: unknown,
  options: MutationHandlerRegistryOptions = {},
): MutationHandlerRegistry {
  const oncely = checkClient(client);
  if (typeof options !== 'object' || options === null) throw new InvalidOptionsError('options', 'must be an object');
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new InvalidOptionsError('onError', 'must be a function');
  }
  const byKey = new Map<string, MutationHandlers<unknown>>();
  const report =
    options.onError ?? ((error: unknown) => console.error('oncely/tanstack-query: a handler threw', error));

  async function dispatch(key: string): Promise<void> {
    if (byKey.size === 0) return;
    const record = await oncely.get(key);
    const mutationKey = storedMutationKey(record);
    if (record === undefined || mutationKey === undefined) return;
    const handlers = byKey.get(keyText(mutationKey));
    if (handlers === undefined) return;
    const context: SettledContext = { key, mutationKey, record, queryClient: options.queryClient };
    const outcome = await outcomeOf<unknown>(record, {}, false);
    try {
      if (outcome.ok) await handlers.onSuccess?.(outcome.result, context);
      else await handlers.onError?.(outcome.error, context);
      await handlers.onSettled?.(outcome, context);
    } catch (error) {
      report(error, context);
    }
  }

  const off = oncely.on('settled', (event) => {
    dispatch(event.key).catch((error: unknown) =>
      report(error, { key: event.key, mutationKey: [], record: undefined, queryClient: options.queryClient }),
    );
  });

  return {
    register(mutationKey, handlers) {
      const text = keyText(checkMutationKey(mutationKey));
      if (typeof handlers !== 'object' || handlers === null) {
        throw new InvalidOptionsError('handlers', 'must be an object of onSuccess / onError / onSettled');
      }
      for (const name of ['onSuccess', 'onError', 'onSettled'] as const) {
        if (handlers[name] !== undefined && typeof handlers[name] !== 'function') {
          throw new InvalidOptionsError(`handlers.${name}`, 'must be a function');
        }
      }
      const entry = handlers as MutationHandlers<unknown>;
      byKey.set(text, entry);
      return () => {
        if (byKey.get(text) === entry) byKey.delete(text);
      };
    },
    close: off,
  };
}
