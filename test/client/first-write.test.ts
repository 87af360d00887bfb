/**
 * One durable write before the first byte: when attempt 1 can go at once,
 * the write-ahead records it as started, and the request leaves after that
 * single store write. When something must come first (a `headers` callback,
 * a scope's turn, an aborted signal), the write-ahead is written alone and
 * the attempt's start follows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ClientOptions, memoryStore, type OperationRecord, type WriteOptions } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

interface Write {
  options: WriteOptions | undefined;
  record: OperationRecord | undefined;
}

/** A memory store that logs every update, and a fetch that notes how many had resolved when a request left. */
async function observed(options: Partial<ClientOptions> = {}) {
  const inner = memoryStore();
  const writes: Write[] = [];
  const store: typeof inner = {
    ...inner,
    update: async (key, fn, writeOptions) => {
      const record = await inner.update(key, fn, writeOptions);
      writes.push({ options: writeOptions, record });
      return record;
    },
  };
  const atFirstByte: Array<{ writes: number; record: OperationRecord | undefined }> = [];
  let h: Awaited<ReturnType<typeof harness>> | undefined;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const key = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get(
      'idempotency-key',
    );
    atFirstByte.push({ writes: writes.length, record: key === null ? undefined : await inner.get(key) });
    return (h as NonNullable<typeof h>).rt.fetch(input, init);
  };
  h = await harness({ store, fetch, ...options });
  return { h, writes, atFirstByte, inner };
}

/** Two sends of `key` at once, the server slow to answer: both get one answer from one request and one attempt. */
async function sendTwiceAtOnce(h: Awaited<ReturnType<typeof harness>>, key: string): Promise<void> {
  h.server.script({ kind: 'delay', ms: 50 });
  const request = { method: 'POST', url: '/payments', key, json: { amount: 2 } } as const;
  const [a, b] = await h.rt.run(Promise.all([h.client.send(request), h.client.send(request)]));
  expect(a.data).toEqual(b.data);
  expect(h.server.ledger.requestsFor(key)).toHaveLength(1);
  // No second loop claimed it from under the first: attempt 1 was never marked as lost.
  expect((await h.client.get(key))?.attempts).toMatchObject([{ n: 1, sent: 'definitely' }]);
}

describe('the write-ahead starts attempt 1 when it can go at once', () => {
  it('one durable store write before the first byte, holding attempt 1 as started; two writes in all', async () => {
    const { h, writes, atFirstByte, inner } = await observed();
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'one', json: { amount: 1 } }));
    expect(result.status).toBe(201);
    expect(atFirstByte).toHaveLength(1);
    expect(atFirstByte[0]?.writes).toBe(1);
    expect(atFirstByte[0]?.record).toMatchObject({ state: 'in_flight', epoch: 1, attempts: [{ n: 1, sent: 'maybe' }] });
    expect(atFirstByte[0]?.record?.attempts[0]?.endedAt).toBeUndefined();
    // The write before the first byte is durable; the outcome after it may be relaxed.
    expect(writes[0]?.options?.durability).not.toBe('relaxed');
    expect(writes).toHaveLength(2);
    expect(await inner.get('one')).toMatchObject({ state: 'succeeded', attempts: [{ n: 1, sent: 'definitely' }] });
    expect(h.events.map((e) => e.name)).toEqual(['enqueued', 'attempt:started', 'attempt:ended', 'settled']);
    expect(h.events[1]?.payload).toMatchObject({ key: 'one', attempt: 1, resendCount: 0 });
  });

  it('enqueue too: it returns with attempt 1 durably started, and the operation completes once', async () => {
    const { h, writes, atFirstByte } = await observed();
    const { key, settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'q', json: {} });
    expect(writes).toHaveLength(1);
    expect(writes[0]?.options?.durability).not.toBe('relaxed');
    expect(writes[0]?.record).toMatchObject({ key, state: 'in_flight', attempts: [{ n: 1 }] });
    expect(await h.rt.run(settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect(atFirstByte[0]?.writes).toBe(1);
    expect(h.server.ledger.totalEffects()).toBe(1);
  });

  it('a retry after attempt 1 starts with its own write, as before', async () => {
    const { h, writes, atFirstByte } = await observed({ policy: { backoff: { jitter: 'none', baseDelayMs: 100 } } });
    h.server.script({ kind: 'status', status: 503 });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'r', json: {} }));
    // write-ahead with attempt 1 | retry scheduled | attempt 2 started | succeeded
    expect(atFirstByte.map((a) => a.writes)).toEqual([1, 3]);
    expect(atFirstByte[1]?.record).toMatchObject({ state: 'in_flight', attempts: [{ n: 1, status: 503 }, { n: 2 }] });
    expect(writes).toHaveLength(4);
  });

  it('two sends of one key at once: one loop, one request, one attempt, the same answer', async () => {
    const { h, atFirstByte } = await observed();
    await sendTwiceAtOnce(h, 'twice');
    expect(atFirstByte).toHaveLength(1);
  });

  it('…also when the store tells the first writer late (the second sees the record before its loop has started)', async () => {
    const inner = memoryStore();
    let first = true;
    const store: typeof inner = {
      ...inner,
      update: async (key, fn, options) => {
        const record = await inner.update(key, fn, options);
        if (first) {
          first = false;
          // Committed, but this caller hears of it a turn later than anyone reading after it.
          await new Promise((resolve) => setImmediate(resolve));
        }
        return record;
      },
    };
    await sendTwiceAtOnce(await harness({ store }), 'late');
  });

  it('a write-ahead that fails leaves nothing behind: the next send of the key writes and sends normally', async () => {
    const inner = memoryStore();
    let failNext = true;
    const store: typeof inner = {
      ...inner,
      update: (key, fn, options) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(Object.assign(new Error('disk full'), { code: 'ENOSPC' }));
        }
        return inner.update(key, fn, options);
      },
    };
    const h = await harness({ store });
    const request = { method: 'POST', url: '/payments', key: 'retry-me', json: {} } as const;
    await expect(h.rt.run(h.client.send(request))).rejects.toThrow('disk full');
    expect(h.server.ledger.requests).toHaveLength(0);
    const again = await h.rt.run(h.client.send(request));
    expect(again.status).toBe(201);
    expect(h.server.ledger.requestsFor('retry-me')).toHaveLength(1);
  });
});

describe('the claim of a stored operation starts its attempt when it can go at once', () => {
  const offline = { online: () => false, onOnline: () => () => undefined };

  it('resume: one durable write takes the operation over and starts attempt 1; two writes in all', async () => {
    const { h, writes, atFirstByte } = await observed({ connectivity: offline });
    const { key } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'later', json: {} });
    await h.client.close();
    // Written ahead alone (offline), then its lease given back as the client closed.
    expect(writes.map((w) => w.record?.attempts.length)).toEqual([0, 0]);
    const next = h.another({ connectivity: { online: () => true, onOnline: () => () => undefined }, owner: 'next' });
    expect(await h.rt.run(next.resume())).toMatchObject({ driven: 1, succeeded: 1 });
    expect(atFirstByte[0]?.writes).toBe(3);
    expect(atFirstByte[0]?.record).toMatchObject({
      key,
      state: 'in_flight',
      epoch: 2,
      lease: { owner: 'next' },
      attempts: [{ n: 1, owner: 'next', sent: 'maybe' }],
    });
    expect(writes[2]?.options?.durability).not.toBe('relaxed');
    expect(writes).toHaveLength(4);
  });

  it('a retry the host budget must admit first: the claim is written alone, the start follows', async () => {
    const { h, writes, atFirstByte } = await observed({ policy: { backoff: { jitter: 'none', baseDelayMs: 100 } } });
    h.server.script({ kind: 'status', status: 503 });
    h.client.on('retry:scheduled', () => void h.client.close());
    await h.rt.run(
      h.client.send({ method: 'POST', url: '/payments', key: 'budgeted', json: {} }).catch(() => undefined),
    );
    const before = writes.length;
    const next = h.another({ owner: 'next' });
    await h.rt.run(next.resume());
    expect(writes[before]?.record).toMatchObject({ state: 'pending', epoch: 2, lease: { owner: 'next' } });
    expect(atFirstByte[1]?.writes).toBe(before + 2);
    expect(atFirstByte[1]?.record).toMatchObject({
      attempts: [
        { n: 1, status: 503 },
        { n: 2, owner: 'next' },
      ],
    });
  });
});

describe('the write-ahead is written alone when something must come first', () => {
  it('a headers callback (it may fail, and then nothing may look sent): relaxed write-ahead, then the start', async () => {
    const { h, writes, atFirstByte } = await observed({ headers: () => ({ authorization: 'Bearer t' }) });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'cred', json: {} }));
    expect(writes[0]?.options?.durability).toBe('relaxed');
    expect(writes[0]?.record).toMatchObject({ state: 'pending', attempts: [] });
    expect(atFirstByte[0]?.writes).toBe(2);
    expect(writes).toHaveLength(3);
  });

  it("a scoped operation (it waits for its scope's turn)", async () => {
    const { h, writes, atFirstByte } = await observed();
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'sc', scope: 'cart', json: {} }));
    expect(writes[0]?.record).toMatchObject({ state: 'pending', attempts: [] });
    expect(atFirstByte[0]?.writes).toBe(2);
  });

  it('an aborted signal: written ahead, nothing started or sent, ends aborted', async () => {
    const { h, writes, atFirstByte } = await observed();
    const outcome = await h.rt.run(
      h.client
        .send({ method: 'POST', url: '/payments', key: 'ab', json: {}, signal: AbortSignal.abort() })
        .catch((e: unknown) => e),
    );
    expect(outcome).toBeInstanceOf(Error);
    expect(writes[0]?.record).toMatchObject({ state: 'pending', attempts: [] });
    expect(atFirstByte).toHaveLength(0);
    expect((await h.client.get('ab'))?.attempts).toHaveLength(0);
  });
});
