/**
 * `mutationOptions` under @tanstack/query-core's own QueryClient and
 * MutationObserver, against the reference server and a file store: the
 * mutation sends through oncely (one key, reused on oncely's retries, one
 * effect), TanStack neither retries nor pauses it, a scope orders both, and
 * bad options fail at construction naming the field.
 */
import { MutationObserver, type MutationObserverOptions, onlineManager, QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { isOncelyError, type SendResult } from '../../src/index.js';
import { mutationOptions, type OncelyMutationError } from '../../src/tanstack-query.js';
import { type Setup, setup } from './setup.js';

interface Order {
  id: string;
  amount: number;
}

let open: Setup | undefined;
let queryClient: QueryClient | undefined;
afterEach(async () => {
  queryClient?.clear();
  onlineManager.setOnline(true);
  await open?.close();
  open = undefined;
});

async function start(options: Parameters<typeof setup>[0] = {}): Promise<Setup> {
  open = await setup(options);
  queryClient = new QueryClient();
  return open;
}

function observe<TVariables>(options: ReturnType<typeof mutationOptions<TVariables, unknown>>) {
  if (queryClient === undefined) throw new Error('start() first');
  return new MutationObserver<SendResult, Error, TVariables>(queryClient, options);
}

const payOrder = {
  method: 'POST',
  url: '/payments',
  mutationKey: ['pay'],
  key: (order: Order) => `pay-${order.id}`,
  json: (order: Order) => ({ amount: order.amount }),
} as const;

describe('mutationOptions', () => {
  it('hands TanStack a mutation with its retries and offline pausing off, and the scope as scope.id', async () => {
    const { client } = await start();
    const options = mutationOptions(client, { method: 'post', url: '/payments', scope: 'cart-9' });
    expect(options).toMatchObject({
      mutationKey: ['oncely', 'POST', '/payments'],
      networkMode: 'always',
      retry: 0,
      scope: { id: 'cart-9' },
    });
    expect(typeof options.mutationFn).toBe('function');
    expect('scope' in mutationOptions(client, { method: 'POST', url: '/payments' })).toBe(false);
  });

  it('a lost response is resent by oncely with the same key: one effect, and TanStack saw one call, no failure', async () => {
    const { client, server, rt } = await start();
    server.script({ kind: 'drop-after-commit' });
    const observer = observe(mutationOptions(client, payOrder));
    const result = await rt.run(observer.mutate({ id: 'o1', amount: 4800 }));

    expect(result.key).toBe('pay-o1');
    expect(result.data).toMatchObject({ amount: 4800 });
    expect(server.ledger.requestsFor('pay-o1').map((r) => r.outcome)).toEqual(['effect', 'replay']);
    expect(server.ledger.effectCount('pay-o1')).toBe(1);
    const state = observer.getCurrentResult();
    expect(state.status).toBe('success');
    expect(state.failureCount).toBe(0);
    expect(state.data?.key).toBe('pay-o1');
    // The mutation key is stored with the operation: what handlers find it by after a reload.
    expect((await client.get('pay-o1'))?.meta).toEqual({ mutationKey: ['pay'] });
  });

  it('a second mutate() for the same order (a double click) is the same operation: one effect', async () => {
    const { client, server, rt } = await start();
    const options = mutationOptions(client, payOrder);
    const [first, second] = await rt.run(
      Promise.all([
        observe(options).mutate({ id: 'o2', amount: 100 }),
        observe(options).mutate({ id: 'o2', amount: 100 }),
      ]),
    );
    expect(first.key).toBe('pay-o2');
    expect(second.key).toBe('pay-o2');
    expect(server.ledger.effectCount('pay-o2')).toBe(1);
  });

  it('without a key function, each mutate() is its own operation with a key minted once', async () => {
    const { client, server, rt } = await start();
    const options = mutationOptions<{ amount: number }>(client, { method: 'POST', url: '/payments' });
    const a = await rt.run(observe(options).mutate({ amount: 1 }));
    const b = await rt.run(observe(options).mutate({ amount: 1 }));
    expect(a.key).not.toBe(b.key);
    expect(server.ledger.effectCount(a.key)).toBe(1);
    expect(server.ledger.effectCount(b.key)).toBe(1);
    // The variables are the JSON body when no `json` is given.
    expect((await client.get(a.key))?.request.body).toBeDefined();
  });

  it('an operation that may have taken effect rejects with mayHaveTakenEffect, and TanStack does not retry it', async () => {
    const { client, server, rt } = await start({ maxAttempts: 2 });
    server.script({ kind: 'reset-after-commit' }, { kind: 'reset-after-commit' });
    const observer = observe(mutationOptions(client, payOrder));
    const error = await rt.run(observer.mutate({ id: 'o3', amount: 7 })).catch((e: unknown) => e);

    expect(isOncelyError(error)).toBe(true);
    expect(error).toMatchObject({ state: 'unknown', key: 'pay-o3', mayHaveTakenEffect: true });
    const state = observer.getCurrentResult();
    expect(state.status).toBe('error');
    expect(state.failureCount).toBe(1);
    // oncely's two attempts, both with the one key; TanStack added none.
    expect(server.ledger.requestsFor('pay-o3')).toHaveLength(2);
    expect(server.ledger.effectCount('pay-o3')).toBe(1);
  });

  it('offline (TanStack and oncely both say so), the mutation is stored and running, not paused; back online it goes once', async () => {
    const { client, server, rt, network } = await start({ online: false });
    onlineManager.setOnline(false);
    const observer = observe(mutationOptions(client, payOrder));
    const stored = new Promise<void>((resolve) => client.on('enqueued', () => resolve()));
    const done = observer.mutate({ id: 'o4', amount: 9 });
    // Written ahead before any attempt, and no attempt while offline.
    await stored;
    const record = await client.get('pay-o4');
    expect(record?.state).toBe('pending');
    expect(observer.getCurrentResult()).toMatchObject({ status: 'pending', isPaused: false });
    expect(server.ledger.requests).toHaveLength(0);

    onlineManager.setOnline(true);
    network.set(true);
    const result = await rt.run(done);
    expect(result.key).toBe('pay-o4');
    expect(server.ledger.effectCount('pay-o4')).toBe(1);
  });

  it('mode "enqueue" tells the key once the operation is stored, then resolves when it settles', async () => {
    const { client, server, rt } = await start();
    const told: Array<{ key: string; state: string | undefined; requests: number }> = [];
    const options = mutationOptions(client, {
      ...payOrder,
      mode: 'enqueue',
      onEnqueued: (key) => {
        void client.get(key).then((r) => told.push({ key, state: r?.state, requests: server.ledger.requests.length }));
      },
    });
    const result = await rt.run(observe(options).mutate({ id: 'o5', amount: 3 }));
    expect(result.key).toBe('pay-o5');
    expect(told).toHaveLength(1);
    expect(told[0]?.key).toBe('pay-o5');
    // Stored when told (pending, or already sending), and told before the answer came back.
    expect(['pending', 'in_flight', 'succeeded']).toContain(told[0]?.state);
    expect(server.ledger.effectCount('pay-o5')).toBe(1);

    // A throwing onEnqueued never reports a stored operation as not done.
    const throwing = mutationOptions(client, {
      ...payOrder,
      mode: 'enqueue',
      onEnqueued: () => {
        throw new Error('boom');
      },
    });
    const again = await rt.run(observe(throwing).mutate({ id: 'o6', amount: 3 }));
    expect(again.key).toBe('pay-o6');
    expect(server.ledger.effectCount('pay-o6')).toBe(1);
  });

  it('one scope: TanStack holds the second mutation while the first runs, and oncely stores both in the scope, in order', async () => {
    const { client, server, rt } = await start();
    const hold = server.hold({ key: 'pay-s1' });
    const options = mutationOptions(client, { ...payOrder, scope: 'cart-1' });
    const first = observe(options);
    const second = observe(options);
    const a = first.mutate({ id: 's1', amount: 1 });
    const b = second.mutate({ id: 's2', amount: 2 });
    await hold.arrived;
    expect(second.getCurrentResult()).toMatchObject({ status: 'pending', isPaused: true });
    expect(server.ledger.requestsFor('pay-s2')).toHaveLength(0);
    hold.release();
    await rt.run(Promise.all([a, b]));
    const order = server.ledger.requests.map((r) => r.key);
    expect(order.indexOf('pay-s1')).toBeLessThan(order.indexOf('pay-s2'));
    expect((await client.get('pay-s1'))?.scope).toBe('cart-1');
    expect((await client.get('pay-s2'))?.scope).toBe('cart-1');
  });

  it.each([
    [{ method: 'POST /x', url: '/payments' }, 'method'],
    [{ method: 'POST', url: '' }, 'url'],
    [{ method: 'POST', url: () => '/payments' }, 'mutationKey'],
    [{ method: 'POST', url: '/payments', mutationKey: [] }, 'mutationKey'],
    [{ method: 'POST', url: '/payments', mutationKey: ['pay', new Date(0)] }, 'mutationKey.1'],
    [{ method: 'POST', url: '/payments', mode: 'later' }, 'mode'],
    [{ method: 'POST', url: '/payments', scope: '' }, 'scope'],
    [{ method: 'POST', url: '/payments', key: 'k1' }, 'key'],
    [{ method: 'POST', url: '/payments', json: { amount: 1 } }, 'json'],
    [{ method: 'POST', url: '/payments', headers: 'x' }, 'headers'],
    [{ method: 'POST', url: '/payments', responseSchema: {} }, 'responseSchema'],
  ])('refuses %j at construction, naming `%s`', async (spec, field) => {
    const { client } = await start();
    expect(() => mutationOptions(client, spec as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options', field }),
    );
  });

  it('fits the option types of query-core for its variables, data and errors', async () => {
    const { client } = await start();
    const options = mutationOptions<Order, { amount: number }>(client, payOrder);
    expectTypeOf(options).toExtend<
      MutationObserverOptions<SendResult<{ amount: number }>, OncelyMutationError, Order>
    >();
    expectTypeOf(options.mutationFn).parameter(0).toEqualTypeOf<Order>();
  });

  it('a variables function that throws rejects the mutation, and nothing is stored or sent', async () => {
    const { client, server, rt } = await start();
    const options = mutationOptions(client, {
      ...payOrder,
      json: () => {
        throw new Error('no amount');
      },
    });
    const observer = observe(options);
    const error = await rt.run(observer.mutate({ id: 'x1', amount: 1 })).catch((e: unknown) => e);
    expect((error as Error).message).toBe('no amount');
    expect(observer.getCurrentResult().status).toBe('error');
    expect(await client.list()).toEqual([]);
    expect(server.ledger.requests).toHaveLength(0);
  });

  it('refuses something that is not an oncely client, naming the missing call', () => {
    expect(() => mutationOptions({ send: () => undefined }, payOrder)).toThrow(
      expect.objectContaining({ code: 'invalid_options', field: 'client.enqueue' }),
    );
    expect(() => mutationOptions(undefined, payOrder)).toThrow(expect.objectContaining({ field: 'client' }));
  });
});
