/**
 * `outboxQueryOptions` under @tanstack/query-core's QueryObserver: the
 * operations not done yet, listed offline (the store is local), kept live
 * by `setQueryData` from the client (no refetch), with a state filter, and
 * no listening left once TanStack drops the query.
 */
import { QueryClient, QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { OUTBOX_STATES, type Outbox, outboxQueryOptions } from '../../src/tanstack-query.js';
import { type Setup, setup } from './setup.js';

let open: Setup | undefined;
let queryClient: QueryClient | undefined;
afterEach(async () => {
  queryClient?.clear();
  await open?.close();
  open = undefined;
});

/** The outbox query with its query function counted. */
function counted(options: ReturnType<typeof outboxQueryOptions>) {
  const calls = { n: 0 };
  return {
    calls,
    options: {
      ...options,
      queryFn: (context: Parameters<typeof options.queryFn>[0]) => {
        calls.n++;
        return options.queryFn(context);
      },
    },
  };
}

// Short timer turns rather than setImmediate ones: the file store's reads finish on libuv's thread pool, which a
// loaded machine can keep busy for longer than thousands of immediate turns take.
async function turnsUntil(check: () => boolean, turns = 2_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the condition never held');
}

describe('outboxQueryOptions', () => {
  it('is a query that runs offline and is never stale, keyed by its states', async () => {
    open = await setup();
    const options = outboxQueryOptions(open.client);
    expect(options).toMatchObject({
      queryKey: ['oncely', 'outbox', { states: [...OUTBOX_STATES] }],
      networkMode: 'always',
      staleTime: Number.POSITIVE_INFINITY,
      refetchOnMount: 'always',
    });
    expect(outboxQueryOptions(open.client, { states: ['unknown'] }).queryKey).toEqual([
      'oncely',
      'outbox',
      { states: ['unknown'] },
    ]);
    expect(outboxQueryOptions(open.client, { queryKey: ['mine'] }).queryKey).toEqual(['mine']);
    expect(() => outboxQueryOptions(open?.client, { states: ['pending', 'done' as never] })).toThrow(
      expect.objectContaining({ code: 'invalid_options', field: 'states.1' }),
    );
    expect(() => outboxQueryOptions(open?.client, { states: [] })).toThrow(
      expect.objectContaining({ field: 'states' }),
    );
  });

  it('lists what waits offline, then follows every change through setQueryData, with one fetch', async () => {
    const s = await setup({ online: false });
    open = s;
    queryClient = new QueryClient();
    const { options, calls } = counted(outboxQueryOptions(s.client));
    const observer = new QueryObserver<Outbox>(queryClient, options);
    const seen: Outbox[] = [];
    const unsubscribe = observer.subscribe((result) => {
      if (result.data !== undefined) seen.push(result.data);
    });
    await turnsUntil(() => seen.length > 0);
    expect(seen.at(-1)?.operations).toEqual([]);

    const a = await s.client.enqueue({ method: 'POST', url: '/payments', key: 'out-a', json: { amount: 1 } });
    const b = await s.client.enqueue({ method: 'POST', url: '/payments', key: 'out-b', json: { amount: 2 } });
    await turnsUntil(() => seen.at(-1)?.operations.length === 2);
    const waiting = seen.at(-1);
    expect(waiting?.operations.map((op) => [op.key, op.state, op.method, op.url])).toEqual([
      ['out-a', 'pending', 'POST', `${s.server.url}/payments`],
      ['out-b', 'pending', 'POST', `${s.server.url}/payments`],
    ]);
    expect(waiting?.counts.pending).toBe(2);
    expect(waiting?.active).toBe(2);
    expect(s.server.ledger.requests).toHaveLength(0);

    s.network.set(true);
    await s.rt.run(Promise.all([a.settled, b.settled]));
    await turnsUntil(() => seen.at(-1)?.operations.length === 0);
    expect(s.server.ledger.effectCount('out-a')).toBe(1);
    expect(s.server.ledger.effectCount('out-b')).toBe(1);
    // Every update came from the client, not from refetching.
    expect(calls.n).toBe(1);
    expect(observer.getCurrentResult().fetchStatus).toBe('idle');
    unsubscribe();
  });

  it('with states: ["succeeded"], shows what settled; a refetch answers from the live view', async () => {
    const s = await setup();
    open = s;
    queryClient = new QueryClient();
    const observer = new QueryObserver<Outbox>(queryClient, outboxQueryOptions(s.client, { states: ['succeeded'] }));
    const unsubscribe = observer.subscribe(() => undefined);
    await s.rt.run(s.client.send({ method: 'POST', url: '/payments', key: 'done-1', json: {} }));
    await turnsUntil(() => observer.getCurrentResult().data?.operations.length === 1);
    expect(observer.getCurrentResult().data?.operations[0]).toMatchObject({ key: 'done-1', state: 'succeeded' });
    const again = await observer.refetch();
    expect(again.data?.counts.succeeded).toBe(1);
    unsubscribe();
  });

  it('data restored from a persisted cache is replaced by the live view on mount', async () => {
    const s = await setup({ online: false });
    open = s;
    queryClient = new QueryClient();
    const options = outboxQueryOptions(s.client);
    await s.client.enqueue({ method: 'POST', url: '/payments', key: 'now-1', json: {} });
    // As a persister would hydrate it: an outbox from an earlier session, fresh forever by its staleTime.
    queryClient.setQueryData<Outbox>(options.queryKey, {
      operations: [],
      counts: { pending: 0, in_flight: 0, succeeded: 0, blocked: 0, failed: 0, unknown: 0 },
      active: 0,
      online: undefined,
    });
    const observer = new QueryObserver<Outbox>(queryClient, options);
    const unsubscribe = observer.subscribe(() => undefined);
    await turnsUntil(() => observer.getCurrentResult().data?.operations.length === 1);
    expect(observer.getCurrentResult().data?.operations[0]?.key).toBe('now-1');
    unsubscribe();
  });

  it('stops listening to the client once TanStack removes the query', async () => {
    const s = await setup({ online: false });
    open = s;
    queryClient = new QueryClient();
    let lists = 0;
    const list = s.client.list.bind(s.client);
    s.client.list = (filter) => {
      lists++;
      return list(filter);
    };
    const options = outboxQueryOptions(s.client);
    const observer = new QueryObserver<Outbox>(queryClient, options);
    const unsubscribe = observer.subscribe(() => undefined);
    await turnsUntil(() => observer.getCurrentResult().data !== undefined);
    await s.client.enqueue({ method: 'POST', url: '/payments', key: 'gone-1', json: {} });
    await turnsUntil(() => observer.getCurrentResult().data?.operations.length === 1);
    const before = lists;
    expect(before).toBeGreaterThanOrEqual(2);

    unsubscribe();
    queryClient.removeQueries({ queryKey: options.queryKey });
    await s.client.enqueue({ method: 'POST', url: '/payments', key: 'gone-2', json: {} });
    await turnsUntil(() => false, 50).catch(() => undefined);
    expect(lists).toBe(before);
  });
});
