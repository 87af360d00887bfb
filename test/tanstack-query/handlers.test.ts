/**
 * Callbacks that survive a restart: a mutation queued offline by one app
 * (its `mutate()` and closures then gone with it) settles in the next one,
 * and the handlers that app registered for the mutation key run once, with
 * the result, while the live outbox query empties through `setQueryData`.
 */
import { MutationObserver, QueryClient, QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome, SendResult } from '../../src/index.js';
import {
  createMutationHandlers,
  mutationOptions,
  type Outbox,
  outboxQueryOptions,
  type SettledContext,
} from '../../src/tanstack-query.js';
import { type Setup, setup } from './setup.js';

interface Order {
  id: string;
  amount: number;
}

let open: Setup | undefined;
const queryClients: QueryClient[] = [];
afterEach(async () => {
  for (const qc of queryClients.splice(0)) qc.clear();
  await open?.close();
  open = undefined;
});

function newQueryClient(): QueryClient {
  const qc = new QueryClient();
  queryClients.push(qc);
  return qc;
}

const payOrder = {
  method: 'POST',
  url: '/payments',
  mutationKey: ['pay'],
  key: (order: Order) => `pay-${order.id}`,
  json: (order: Order) => ({ amount: order.amount }),
  meta: (order: Order) => ({ orderId: order.id }),
} as const;

/** The first app: queues `orders` through TanStack while offline, then stops (its mutations never settle there). */
async function queueOfflineAndStop(s: Setup, orders: Order[]): Promise<void> {
  const qc = newQueryClient();
  const stored = orders.map(
    (order) =>
      new Promise<string>((resolve) => {
        const options = mutationOptions(s.client, { ...payOrder, mode: 'enqueue', onEnqueued: resolve });
        // Its outcome never comes here: the app is gone before the network is back.
        new MutationObserver(qc, options).mutate(order).catch(() => undefined);
      }),
  );
  await Promise.all(stored);
  // The app goes away: its client stops, the operations stay stored, pending.
  await s.client.close();
  qc.clear();
}

describe('createMutationHandlers', () => {
  it('runs the handlers of the mutation key once for an operation queued before a restart, with its result', async () => {
    const s = await setup({ online: false });
    open = s;
    await queueOfflineAndStop(s, [{ id: 'r1', amount: 4800 }]);
    expect(s.server.ledger.requests).toHaveLength(0);

    // The app starts again: a new client on the same store, a new QueryClient, the handlers registered at once.
    const client = s.restart();
    const queryClient = newQueryClient();
    const handlers = createMutationHandlers(client, { queryClient });
    const calls: Array<{ what: string; key: string; data?: unknown; context: SettledContext }> = [];
    handlers.register<{ amount: number }>(['pay'], {
      onSuccess: (result: SendResult<{ amount: number }>, context) =>
        void calls.push({ what: 'success', key: result.key, data: result.data, context }),
      onError: (_error, context) => void calls.push({ what: 'error', key: context.key, context }),
      onSettled: (outcome: Outcome<{ amount: number }>, context) =>
        void calls.push({ what: `settled:${outcome.state}`, key: outcome.key, context }),
    });

    // The outbox shows it waiting, before anything is sent.
    const outbox = new QueryObserver<Outbox>(queryClient, outboxQueryOptions(client));
    const seen: Outbox[] = [];
    outbox.subscribe((result) => {
      if (result.data !== undefined) seen.push(result.data);
    });
    const first = await outbox.refetch();
    expect(first.data?.operations.map((op) => [op.key, op.state])).toEqual([['pay-r1', 'pending']]);

    const summary = await s.rt.run(client.resume());
    expect(summary.succeeded).toBe(1);
    expect(s.server.ledger.effectCount('pay-r1')).toBe(1);
    // The settled event fires after the write; handlers run right after it.
    await s.rt.run(untilTrue(() => calls.length >= 2));
    await turns(20); // room for a duplicate call to show up
    expect(calls.map((c) => [c.what, c.key])).toEqual([
      ['success', 'pay-r1'],
      ['settled:succeeded', 'pay-r1'],
    ]);
    expect(calls[0]?.data).toMatchObject({ amount: 4800 });
    expect(calls[0]?.context.mutationKey).toEqual(['pay']);
    expect(calls[0]?.context.queryClient).toBe(queryClient);
    expect(calls[0]?.context.record?.meta).toMatchObject({ orderId: 'r1' });

    // The outbox emptied by itself (setQueryData from the client's events), without a refetch.
    await s.rt.run(untilTrue(() => seen.at(-1)?.operations.length === 0));
    expect(queryClient.getQueryData<Outbox>(outboxQueryOptions(client).queryKey)?.active).toBe(0);
    handlers.close();
  });

  it('tells a sure failure from one that may have taken effect, and isolates a throwing handler', async () => {
    const s = await setup({ maxAttempts: 2 });
    open = s;
    const reported: unknown[] = [];
    const handlers = createMutationHandlers(s.client, { onError: (error) => reported.push(error) });
    const errors: Array<[string, boolean | undefined]> = [];
    handlers.register(['pay'], {
      onError: (error, context) => void errors.push([context.key, error.mayHaveTakenEffect]),
      onSettled: () => {
        throw new Error('handler bug');
      },
    });
    s.server.script(
      { kind: 'status', status: 422, match: { key: 'pay-bad' } },
      { kind: 'reset-after-commit', match: { key: 'pay-amb' } },
      { kind: 'reset-after-commit', match: { key: 'pay-amb' } },
    );
    const qc = newQueryClient();
    const options = mutationOptions(s.client, payOrder);
    const bad = new MutationObserver(qc, options).mutate({ id: 'bad', amount: 1 }).catch((e: unknown) => e);
    const amb = new MutationObserver(qc, options).mutate({ id: 'amb', amount: 1 }).catch((e: unknown) => e);
    await s.rt.run(Promise.all([bad, amb]));
    await s.rt.run(untilTrue(() => errors.length === 2 && reported.length === 2));
    expect(Object.fromEntries(errors)).toEqual({ 'pay-bad': false, 'pay-amb': true });
    expect(reported.map((e) => (e as Error).message)).toEqual(['handler bug', 'handler bug']);
    handlers.close();
  });

  it('runs nothing for other mutation keys, for operations sent without mutationOptions, or once unregistered', async () => {
    const s = await setup();
    open = s;
    const handlers = createMutationHandlers(s.client);
    const seen: string[] = [];
    const unregister = handlers.register(['pay'], { onSettled: (o) => void seen.push(o.key) });
    handlers.register(['refund'], { onSettled: (o) => void seen.push(`refund:${o.key}`) });
    const qc = newQueryClient();
    await s.rt.run(new MutationObserver(qc, mutationOptions(s.client, payOrder)).mutate({ id: 'a', amount: 1 }));
    await s.rt.run(s.client.send({ method: 'POST', url: '/payments', key: 'plain', json: {} }));
    await s.rt.run(untilTrue(() => seen.length >= 1));
    unregister();
    await s.rt.run(new MutationObserver(qc, mutationOptions(s.client, payOrder)).mutate({ id: 'b', amount: 1 }));
    await s.rt.run(
      new MutationObserver(qc, mutationOptions(s.client, { ...payOrder, mutationKey: ['refund'] })).mutate({
        id: 'c',
        amount: 1,
      }),
    );
    await s.rt.run(untilTrue(() => seen.length >= 2));
    expect(seen).toEqual(['pay-a', 'refund:pay-c']);
    expect(() => handlers.register([], {})).toThrow(expect.objectContaining({ field: 'mutationKey' }));
    expect(() => handlers.register(['x'], { onSuccess: 'no' as never })).toThrow(
      expect.objectContaining({ field: 'handlers.onSuccess' }),
    );
    handlers.close();
  });
});

/** Lets `n` turns of the event loop pass. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves once `check()` holds, looking again every few milliseconds (timer turns, not immediate ones: the file
 * store's I/O finishes on libuv's thread pool, which a loaded machine keeps busy for longer than immediate turns).
 */
async function untilTrue(check: () => boolean, turns = 2_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the condition never held');
}
