/**
 * `outboxQueryOptions`: the operations not yet done (or any states asked
 * for) as a TanStack query, kept live. The store is local, so the query
 * runs offline too (`networkMode: 'always'`: offline is exactly when a
 * queue has something to show) and is never stale (`staleTime: Infinity`):
 * its first fetch subscribes to the client, and every change is written
 * into the cache with `queryClient.setQueryData`, until TanStack removes
 * the query (no observer left for `gcTime`).
 *
 * The browser client's `subscribe` sees every tab's operations; the core
 * client (Node) is re-read after its own events.
 */
import type { QueryClient, QueryFunctionContext, QueryKey } from '@tanstack/query-core';
import {
  type ClientStatus,
  LiveView,
  type OperationView,
  type QueueSnapshot,
  type SubscribeOptions,
} from '../browser/subscribe.js';
import { InvalidOptionsError } from '../errors.js';
import { countAttempts, OPERATION_STATES, type OperationState, writeOrder } from '../model/vocabulary.js';
import { type AdapterClient, checkClient } from './client.js';
import { keyText } from './mutation-key.js';

/** The states an outbox shows by default: not done yet, or needing a decision. */
export const OUTBOX_STATES: readonly OperationState[] = ['pending', 'in_flight', 'blocked', 'unknown'];

export interface OutboxFilter {
  /**
   * Only operations in these states.
   * @default ['pending', 'in_flight', 'blocked', 'unknown']
   * @example { states: ['unknown'] }
   */
  states?: readonly OperationState[];
  /**
   * The query's key. Give one of your own to keep two outboxes (two clients)
   * in one `QueryClient`.
   * @default ['oncely', 'outbox', { states }]
   */
  queryKey?: QueryKey;
}

/** What the query holds. */
export interface Outbox {
  /** Oldest first. */
  operations: OperationView[];
  /** How many of the listed operations are in each state. */
  counts: Record<OperationState, number>;
  /** Listed operations not settled yet (`pending` + `in_flight`). */
  active: number;
  /** Whether the browser client would attempt now; `undefined` for a client that does not say. */
  online: boolean | undefined;
}

export interface OutboxQueryOptions {
  queryKey: QueryKey;
  queryFn: (context: QueryFunctionContext) => Promise<Outbox>;
  staleTime: number;
  refetchOnMount: 'always';
  networkMode: 'always';
}

/** What the core client's snapshots carry as status: nothing it knows (it has no connectivity of its own). */
const NO_STATUS: ClientStatus = {
  leader: true,
  mode: 'leases',
  online: true,
  storage: { persisted: undefined, wiped: undefined },
};

interface Live {
  /** The first snapshot (a rejection if the first read failed), then the latest. */
  current(): Promise<Outbox>;
  stop(): void;
}

/** Live outboxes by oncely client, then query client, then query key. */
const lives = new WeakMap<AdapterClient, WeakMap<QueryClient, Map<string, Live>>>();

/**
 * Query options for the client's outbox.
 *
 * @example
 * const { data } = useQuery(outboxQueryOptions(client));
 * data?.operations.map((op) => <li key={op.key}>{op.method} {op.url}: {op.state}</li>);
 */
export function outboxQueryOptions(client: unknown, filter: OutboxFilter = {}): OutboxQueryOptions {
  const oncely = checkClient(client);
  if (typeof filter !== 'object' || filter === null) throw new InvalidOptionsError('filter', 'must be an object');
  const states = filter.states ?? OUTBOX_STATES;
  if (!Array.isArray(states) || states.length === 0) {
    throw new InvalidOptionsError('states', 'must be a non-empty array of operation states');
  }
  for (const [i, state] of states.entries()) {
    if (!OPERATION_STATES.includes(state)) {
      throw new InvalidOptionsError(`states.${i}`, `must be one of ${OPERATION_STATES.join(', ')}`);
    }
  }
  if (filter.queryKey !== undefined && !Array.isArray(filter.queryKey)) {
    throw new InvalidOptionsError('queryKey', 'must be an array');
  }
  const queryKey: QueryKey = filter.queryKey ?? ['oncely', 'outbox', { states: [...states] }];
  return {
    queryKey,
    queryFn: ({ client: queryClient }) => {
      // The QueryClient is handed to query functions since @tanstack/query-core 5.80 (the peer range).
      if (queryClient === undefined) throw new Error('oncely/tanstack-query needs @tanstack/query-core 5.80 or later');
      return liveFor(oncely, queryClient, queryKey, states).current();
    },
    staleTime: Number.POSITIVE_INFINITY,
    // Data restored by a persister is never stale either, yet no subscription fills it: every mount
    // asks the query function, which answers from the live view (starting it if it is not running).
    refetchOnMount: 'always',
    networkMode: 'always',
  };
}

function liveFor(
  client: AdapterClient,
  queryClient: QueryClient,
  queryKey: QueryKey,
  states: readonly OperationState[],
): Live {
  let byQueryClient = lives.get(client);
  if (byQueryClient === undefined) {
    byQueryClient = new WeakMap();
    lives.set(client, byQueryClient);
  }
  let byKey = byQueryClient.get(queryClient);
  if (byKey === undefined) {
    byKey = new Map();
    byQueryClient.set(queryClient, byKey);
  }
  const text = keyText(queryKey);
  const existing = byKey.get(text);
  if (existing !== undefined) return existing;
  const live = startLive(client, queryClient, queryKey, states, () => byKey.delete(text));
  byKey.set(text, live);
  return live;
}

function startLive(
  client: AdapterClient,
  queryClient: QueryClient,
  queryKey: QueryKey,
  states: readonly OperationState[],
  forget: () => void,
): Live {
  let resolveFirst: (outbox: Outbox) => void = () => undefined;
  let rejectFirst: (error: unknown) => void = () => undefined;
  const first = new Promise<Outbox>((resolve, reject) => {
    resolveFirst = resolve;
    rejectFirst = reject;
  });
  let latest: Outbox | undefined;
  const push = (snapshot: QueueSnapshot, online: boolean | undefined): void => {
    const outbox: Outbox = {
      operations: snapshot.operations,
      counts: snapshot.counts,
      active: snapshot.active,
      online,
    };
    const isFirst = latest === undefined;
    latest = outbox;
    if (isFirst) resolveFirst(outbox);
    else queryClient.setQueryData(queryKey, outbox);
  };

  const options: SubscribeOptions = { states };
  let refresh: () => Promise<void> = () => Promise.resolve();
  let unsubscribe: () => void;
  if (client.subscribe !== undefined) {
    unsubscribe = client.subscribe((snapshot) => push(snapshot, snapshot.online), options);
  } else {
    const view = new LiveView({
      vocabulary: { countAttempts, OPERATION_STATES, writeOrder },
      load: () => client.list({ state: states }),
      status: () => NO_STATUS,
      currentUser: () => undefined,
      onError: (error) => {
        // A failed first read fails this fetch, and the next fetch starts over.
        if (latest === undefined) {
          rejectFirst(error);
          stop();
        }
      },
    });
    const offView = view.subscribe((snapshot) => push(snapshot, undefined), { ...options, userId: undefined });
    const offEvents = (['enqueued', 'attempt:started', 'attempt:ended', 'settled'] as const).map((event) =>
      client.on(event, () => {
        void view.refresh();
      }),
    );
    refresh = () => view.refresh();
    unsubscribe = () => {
      offView();
      for (const off of offEvents) off();
    };
  }

  // Stop listening once TanStack drops the query (or the QueryClient is cleared).
  const cache = queryClient.getQueryCache();
  const offCache = cache.subscribe((event) => {
    if (event.type === 'removed' && keyText(event.query.queryKey) === keyText(queryKey)) stop();
  });
  let stopped = false;
  function stop(): void {
    if (stopped) return;
    stopped = true;
    offCache();
    unsubscribe();
    forget();
  }

  return {
    async current() {
      if (latest === undefined) return first;
      await refresh();
      return latest;
    },
    stop,
  };
}
