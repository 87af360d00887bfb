/**
 * `mutationOptions`: a TanStack mutation whose `mutationFn` hands the write
 * to oncely. oncely owns durability and retries (the key is written ahead
 * before the first attempt and reused on every retry, across reloads);
 * TanStack owns the UI state. So the options turn TanStack's own retries
 * off (`retry: 0`: a TanStack retry would call `mutationFn` again, a new
 * operation under a new key) and never let TanStack pause the mutation
 * while offline (`networkMode: 'always'`: oncely stores it at once and
 * sends it when it can; a mutation TanStack pauses is not stored anywhere
 * that survives a reload until it is persisted, and is resent as new).
 */
import type { MutationScope } from '@tanstack/query-core';
import type { SendResult } from '../client-api.js';
import { type AnyOncelyError, InvalidOptionsError, type OperationAbortError } from '../errors.js';
import type { OncelyRequest, StandardSchemaV1 } from '../flow/request/operation.js';
import { type AdapterClient, checkClient } from './client.js';
import { checkMutationKey, MUTATION_KEY_META, type MutationKey } from './mutation-key.js';

/** Where a value comes from: fixed, or computed from the mutation's variables. */
export type FromVariables<TVariables, T> = T | ((variables: TVariables) => T);

export interface OncelyMutationSpec<TVariables, TData> {
  /**
   * The HTTP method of the write.
   * @example 'POST'
   */
  method: string;
  /**
   * The URL (absolute, or joined to the client's `baseUrl`), or a function of
   * the variables. A function needs an explicit `mutationKey`.
   * @example (order: Order) => `/orders/${order.id}/pay`
   */
  url: FromVariables<TVariables, string>;
  /**
   * The JSON body, from the variables.
   * @default the variables themselves (no body when they are `undefined`)
   * @example (order: Order) => ({ amount: order.total, currency: 'EUR' })
   */
  json?: (variables: TVariables) => unknown;
  /**
   * The idempotency key, from the variables. Give one derived from your
   * business identity (`deriveKey`, an order id) so that a second `mutate()`
   * for the same thing (a double click, a second tab) is the same operation;
   * `undefined` lets oncely mint one per `mutate()` call.
   * @default a key minted by oncely for each `mutate()`
   * @example (order: Order) => `pay-${order.id}`
   */
  key?: (variables: TVariables) => string | undefined;
  /**
   * Operations of one scope are sent in order, one at a time, by oncely;
   * the same id is given to TanStack as `scope.id`, so its mutations of the
   * scope also wait their turn (`isPaused` while they do).
   * @default none (no ordering)
   * @example 'cart-9'
   */
  scope?: string;
  /**
   * `'send'`: `mutationFn` resolves or rejects when the operation settles.
   * `'enqueue'`: the same, but the operation is first written ahead and
   * `onEnqueued` told its key, so an offline-first UI can show it as queued
   * at once. Either way the operation outlives the page.
   * @default 'send'
   */
  mode?: 'send' | 'enqueue';
  /**
   * The TanStack mutation key, stored with every operation (in
   * `meta.mutationKey`) so that handlers registered for it
   * (`createMutationHandlers`) run for operations that settle after a
   * reload. Plain JSON data.
   * @default ['oncely', method, url] (required when `url` is a function)
   * @example ['pay']
   */
  mutationKey?: MutationKey;
  /** Headers stored with the operation (only safe ones; credentials go in the client's `headers` callback). */
  headers?: Record<string, string>;
  /** Validates the 2xx body (any Standard Schema, e.g. zod). */
  responseSchema?: StandardSchemaV1<unknown, TData>;
  /**
   * More plain JSON metadata stored with the operation, from the variables
   * (e.g. what a handler needs after a reload to say what was paid).
   * @example (order: Order) => ({ orderId: order.id })
   */
  meta?: (variables: TVariables) => Record<string, unknown>;
  /**
   * With `mode: 'enqueue'`: called once the operation is stored, before any
   * attempt. A throw is ignored: the operation is stored and goes on.
   */
  onEnqueued?: (key: string, variables: TVariables) => void;
}

/** What a mutation rejects with: an oncely error (`mayHaveTakenEffect` says whether it may have happened). */
export type OncelyMutationError = AnyOncelyError | OperationAbortError;

/**
 * Options for `useMutation`, `injectMutation`, `createMutation`,
 * `new MutationObserver(...)` in any TanStack adapter.
 */
export interface OncelyMutationOptions<TVariables, TData> {
  mutationKey: MutationKey;
  mutationFn: (variables: TVariables) => Promise<SendResult<TData>>;
  networkMode: 'always';
  retry: 0;
  scope?: MutationScope;
}

const MODES = ['send', 'enqueue'] as const;

/**
 * TanStack mutation options that send through oncely.
 *
 * @example
 * const pay = useMutation({
 *   ...mutationOptions(client, { method: 'POST', url: '/payments', key: (o: Order) => `pay-${o.id}` }),
 *   onSuccess: () => queryClient.invalidateQueries({ queryKey: ['orders'] }),
 * });
 */
export function mutationOptions<TVariables = void, TData = unknown>(
  client: unknown,
  spec: OncelyMutationSpec<TVariables, TData>,
): OncelyMutationOptions<TVariables, TData> {
  const oncely = checkClient(client);
  if (typeof spec !== 'object' || spec === null) throw new InvalidOptionsError('spec', 'must be an object');
  if (typeof spec.method !== 'string' || !/^[A-Za-z]+$/.test(spec.method)) {
    throw new InvalidOptionsError('method', 'must be an HTTP method such as "POST"');
  }
  const method = spec.method.toUpperCase();
  if (typeof spec.url !== 'function' && (typeof spec.url !== 'string' || spec.url === '')) {
    throw new InvalidOptionsError('url', 'must be a non-empty string or a function of the variables');
  }
  for (const name of ['json', 'key', 'meta', 'onEnqueued'] as const) {
    if (spec[name] !== undefined && typeof spec[name] !== 'function') {
      throw new InvalidOptionsError(name, 'must be a function of the variables');
    }
  }
  if (spec.headers !== undefined && (typeof spec.headers !== 'object' || spec.headers === null)) {
    throw new InvalidOptionsError('headers', 'must be an object of header name → value');
  }
  if (spec.responseSchema !== undefined && typeof spec.responseSchema?.['~standard']?.validate !== 'function') {
    throw new InvalidOptionsError('responseSchema', 'must be a Standard Schema (e.g. a zod schema)');
  }
  const mode = spec.mode ?? 'send';
  if (!MODES.includes(mode)) throw new InvalidOptionsError('mode', `must be ${MODES.join(' or ')}`);
  if (spec.scope !== undefined && (typeof spec.scope !== 'string' || spec.scope === '')) {
    throw new InvalidOptionsError('scope', 'must be a non-empty string');
  }
  if (spec.mutationKey === undefined && typeof spec.url === 'function') {
    throw new InvalidOptionsError('mutationKey', 'is required when `url` is a function');
  }
  const mutationKey = checkMutationKey(spec.mutationKey ?? ['oncely', method, spec.url]);

  // Async, so that a throwing `url`, `json`, `key` or `meta` function rejects (nothing is stored then).
  const mutationFn = async (variables: TVariables): Promise<SendResult<TData>> => {
    const request = requestFor(spec, method, mutationKey, variables);
    return mode === 'send' ? oncely.send(request) : enqueued(oncely, request, spec, variables);
  };
  return {
    mutationKey,
    mutationFn,
    networkMode: 'always',
    retry: 0,
    ...(spec.scope === undefined ? {} : { scope: { id: spec.scope } }),
  };
}

function requestFor<TVariables, TData>(
  spec: OncelyMutationSpec<TVariables, TData>,
  method: string,
  mutationKey: MutationKey,
  variables: TVariables,
): OncelyRequest<TData> {
  const url = typeof spec.url === 'function' ? spec.url(variables) : spec.url;
  const json = spec.json === undefined ? variables : spec.json(variables);
  const key = spec.key?.(variables);
  return {
    method,
    url,
    ...(json === undefined ? {} : { json }),
    ...(key === undefined ? {} : { key }),
    ...(spec.scope === undefined ? {} : { scope: spec.scope }),
    ...(spec.headers === undefined ? {} : { headers: spec.headers }),
    ...(spec.responseSchema === undefined ? {} : { responseSchema: spec.responseSchema }),
    meta: { ...spec.meta?.(variables), [MUTATION_KEY_META]: mutationKey },
  } as OncelyRequest<TData>;
}

async function enqueued<TVariables, TData>(
  client: AdapterClient,
  request: OncelyRequest<TData>,
  spec: OncelyMutationSpec<TVariables, TData>,
  variables: TVariables,
): Promise<SendResult<TData>> {
  const { key, settled } = await client.enqueue(request);
  try {
    spec.onEnqueued?.(key, variables);
  } catch {
    // The operation is stored and will be sent: a throwing callback must not report it as not done.
  }
  const outcome = await settled;
  if (outcome.ok) return outcome.result;
  throw outcome.error;
}
