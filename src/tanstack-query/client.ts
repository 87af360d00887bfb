/**
 * What the adapter needs of an oncely client, as a structural type: the
 * core client (`createClient`) and the browser client (`createBrowserClient`)
 * both fit, and so does any wrapper with the same calls. Checked once, at
 * construction, so a wrong argument fails there and names what is missing.
 */

import type { SubscribeOptions, Subscriber } from '../browser/subscribe.js';
import type { Enqueued, SendResult } from '../client-api.js';
import { InvalidOptionsError } from '../errors.js';
import type { OncelyEvents } from '../events.js';
import type { OncelyRequest } from '../flow/request/operation.js';
import type { OperationRecord } from '../model.js';
import type { RecordFilter } from '../store/store.js';

export interface AdapterClient {
  send<T = unknown>(request: OncelyRequest<T>): Promise<SendResult<T>>;
  enqueue<T = unknown>(request: OncelyRequest<T>): Promise<Enqueued<T>>;
  get(key: string): Promise<OperationRecord | undefined>;
  list(filter?: RecordFilter): Promise<OperationRecord[]>;
  on<E extends 'enqueued' | 'attempt:started' | 'attempt:ended' | 'settled'>(
    event: E,
    fn: (payload: OncelyEvents[E]) => void,
  ): () => void;
  /** The browser client's live view (across tabs); the core client has none and is re-read on its events. */
  subscribe?: (fn: Subscriber, options?: SubscribeOptions) => () => void;
}

/** `client` as an adapter client, or an `InvalidOptionsError` naming the first missing call. */
export function checkClient(client: unknown): AdapterClient {
  if (typeof client !== 'object' || client === null) {
    throw new InvalidOptionsError('client', 'must be an oncely client (createClient or createBrowserClient)');
  }
  for (const method of ['send', 'enqueue', 'get', 'list', 'on'] as const) {
    if (typeof (client as Record<string, unknown>)[method] !== 'function') {
      throw new InvalidOptionsError(`client.${method}`, 'must be a function: pass an oncely client');
    }
  }
  return client as AdapterClient;
}
