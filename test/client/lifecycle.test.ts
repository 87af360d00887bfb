/**
 * Credentials, events, abort, response schemas, 401 refresh, resume and
 * lease takeover.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { TAKEOVER_MARGIN_MS } from '../../src/flow/engine/lease-watch.js';
import {
  InvalidRequestError,
  isOncelyError,
  memoryStore,
  OperationError,
  type Outcome,
  ResponseValidationError,
} from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('credentials are supplied at send time and never stored', () => {
  it('the headers callback runs for every attempt; no record contains the secret', async () => {
    const seen: number[] = [];
    const h = await harness({
      headers: ({ attempt }) => {
        seen.push(attempt);
        return { authorization: `Bearer secret-token-${attempt}` };
      },
    });
    h.server.script({ kind: 'status', status: 503 });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', json: { amount: 1 } }));
    expect(seen).toEqual([1, 2]);
    const stored = JSON.stringify(await h.client.list());
    expect(stored).not.toMatch(/secret-token/i);
    expect(stored).not.toMatch(/authorization/i);
    expect(result.status).toBe(201);
  });

  it.each(['Authorization', 'cookie', 'Proxy-Authorization', 'X-Api-Key'])(
    '%s in request headers is refused',
    async (name) => {
      const h = await harness();
      const error = await h.client
        .send({ method: 'POST', url: '/payments', json: {}, headers: { [name]: 'x' } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).field).toBe(`headers.${name}`);
      expect(await h.client.list()).toHaveLength(0);
      expect(h.server.ledger.requests).toHaveLength(0);
    },
  );

  it('configured denied headers are refused too; allowed ones are stored and sent', async () => {
    // Stored headers are an allow-list: X-Trace is stored only because the rule names it.
    const h = await harness({ deniedHeaders: ['X-Session'], policy: { storeHeaders: ['X-Trace', 'X-Session'] } });
    await expect(h.client.send({ method: 'POST', url: '/p', json: {}, headers: { 'x-session': 's' } })).rejects.toThrow(
      /headers.x-session/,
    );
    await h.rt.run(h.client.send({ method: 'POST', url: '/p', key: 'ok', json: {}, headers: { 'X-Trace': 't1' } }));
    expect((await h.client.get('ok'))?.request.headers).toEqual({
      'x-trace': 't1',
      'content-type': 'application/json',
    });
  });

  it('401 → onUnauthorized refreshes once, the same key is resent, one effect', async () => {
    let token = 'stale';
    const h = await harness(
      {
        headers: () => ({ authorization: `Bearer ${token}` }),
        onUnauthorized: () => {
          token = 'fresh';
        },
      },
      { authorize: (header) => header === 'Bearer fresh' },
    );
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'auth', json: {} }));
    expect(result.attempts).toBe(2);
    expect(h.server.ledger.requestsFor('auth').map((r) => r.outcome)).toEqual(['unauthorized', 'effect']);
    expect(h.server.ledger.effectCount('auth')).toBe(1);
  });

  it('401 again after the refresh → blocked', async () => {
    const h = await harness({ onUnauthorized: () => undefined }, { authorize: () => false });
    await expect(
      h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'a2', json: {} })),
    ).rejects.toMatchObject({
      state: 'blocked',
      status: 401,
    });
    expect(h.server.ledger.requestsFor('a2')).toHaveLength(2);
  });
});

describe('events', () => {
  it('tell every transition with key, operation, fingerprint and attempt', async () => {
    const h = await harness({ policy: { backoff: { jitter: 'none', baseDelayMs: 100 } } });
    h.server.script({ kind: 'status', status: 503 });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'ev', json: {} }));
    expect(h.events.map((e) => e.name)).toEqual([
      'enqueued',
      'attempt:started',
      'attempt:ended',
      'retry:scheduled',
      'attempt:started',
      'attempt:ended',
      'settled',
    ]);
    const fingerprint = (await h.client.get('ev'))?.fingerprint;
    for (const e of h.events) {
      expect(e.payload).toMatchObject({ key: 'ev', fingerprint, operation: `POST ${h.server.url}/payments` });
    }
    expect(h.events[2]?.payload).toMatchObject({ attempt: 1, resendCount: 0, class: 'retryable', status: 503 });
    expect(h.events[3]?.payload).toMatchObject({ attempt: 2, delayMs: 100, reason: 'retryable' });
    expect(h.events[5]?.payload).toMatchObject({ attempt: 2, resendCount: 1, class: 'completed' });
    expect(h.events[6]?.payload).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect(result.attempts).toBe(2);
  });

  it('a throwing listener never breaks an operation', async () => {
    const h = await harness();
    const errors: unknown[] = [];
    h.client.on('attempt:started', () => {
      throw new Error('listener bug');
    });
    h.client.on('error', ({ error }) => errors.push(error));
    await expect(h.rt.run(h.client.send({ method: 'POST', url: '/payments', json: {} }))).resolves.toMatchObject({
      status: 201,
    });
    expect(errors).toHaveLength(1);
  });
});

describe('store traffic', () => {
  it('a new operation is two store updates and no reads: written ahead with attempt 1 started, outcome', async () => {
    const inner = memoryStore();
    const calls: string[] = [];
    const store: typeof inner = {
      ...inner,
      get: (key) => {
        calls.push('get');
        return inner.get(key);
      },
      update: (key, fn) => {
        calls.push('update');
        return inner.update(key, fn);
      },
    };
    const h = await harness({ store });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'st', json: {} }));
    expect(calls).toEqual(['update', 'update']);
    expect(await inner.get('st')).toMatchObject({
      state: 'succeeded',
      epoch: 1,
      attempts: [{ n: 1, sent: 'definitely' }],
    });
  });
});

describe('abort', () => {
  it('aborting while waiting for a retry ends the operation (failed: nothing took effect)', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503, retryAfter: 5 });
    const controller = new AbortController();
    h.client.on('retry:scheduled', () => controller.abort());
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'ab', json: {}, signal: controller.signal }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', reason: 'aborted' });
    expect(h.server.ledger.requests).toHaveLength(1);
  });

  it('aborting mid-request ends unknown: the request may have taken effect', async () => {
    const h = await harness();
    const hold = h.server.hold();
    const controller = new AbortController();
    const pending = h.rt.run(
      h.client.send({ method: 'POST', url: '/payments', key: 'ab2', json: {}, signal: controller.signal }),
    );
    await hold.arrived;
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    hold.release();
    expect(error).toMatchObject({ state: 'unknown', reason: 'aborted' });
  });
});

describe('response schema', () => {
  it('a 2xx whose body fails the schema is completed: not retried, raw result kept, typed error', async () => {
    const h = await harness();
    const schema = z.object({ id: z.string(), status: z.literal('authorised') });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'sch', json: { amount: 1 }, responseSchema: schema }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toMatchObject({ code: 'response_invalid', state: 'succeeded', status: 201 });
    expect((await h.client.get('sch'))?.state).toBe('succeeded');
    expect(h.server.ledger.requests).toHaveLength(1);
  });

  it('a matching body is returned typed', async () => {
    const h = await harness();
    const schema = z.object({ id: z.string(), amount: z.number() });
    const result = await h.rt.run(
      h.client.send({ method: 'POST', url: '/payments', json: { amount: 5 }, responseSchema: schema }),
    );
    expect(result.data.amount).toBe(5);
    expect(result.data.id).toMatch(/^res_/);
  });
});

describe('durability across clients', () => {
  it('enqueue writes ahead; a closed client leaves the operation pending; another resumes it with the same key', async () => {
    const h = await harness({ policy: { backoff: { jitter: 'none', baseDelayMs: 1_000 } } });
    h.server.script({ kind: 'status', status: 503 });
    const { key } = await h.client.enqueue({ method: 'POST', url: '/payments', json: { amount: 1 } });
    // Written ahead: the record exists once enqueue resolves, before any answer.
    expect(await h.store.get(key)).toMatchObject({ key, attempts: expect.any(Array) });
    await h.rt.run(new Promise<void>((resolve) => h.client.on('retry:scheduled', () => resolve())));
    await h.client.close();
    expect((await h.store.get(key))?.state).toBe('pending');
    const next = h.another();
    const outcomes: Outcome[] = [];
    const summary = await h.rt.run(next.resume({ onOutcome: (o) => void outcomes.push(o) }));
    expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ key, ok: true, state: 'succeeded' });
    expect(h.server.ledger.requestsFor(key).map((r) => r.key)).toEqual([key, key]);
  });

  it('an owner that vanished mid-attempt: after its lease expires the attempt counts as ambiguous and the same key is resent', async () => {
    const h = await harness({ leaseMs: 5_000 });
    const now = h.rt.now();
    await h.store.put(
      sampleRecord('orphan', {
        request: {
          method: 'POST',
          url: `${h.server.url}/payments`,
          headers: {},
          body: { encoding: 'json', text: '{}' },
        },
        createdAt: now,
        deadlineAt: now + 60_000,
        nextAttemptAt: now,
        state: 'in_flight',
        epoch: 3,
        lease: { owner: 'crashed-tab', until: now + 2_000 },
        attempts: [{ n: 1, owner: 'crashed-tab', startedAt: now, sent: 'maybe' }],
      }),
    );
    // Still leased: resume leaves it alone.
    expect((await h.client.resume()).driven).toBe(0);
    await h.rt.advance(2_001);
    // Expired by the wall clock, which proves nothing: watched first, for attempt timeout + lease + margin.
    expect(await h.rt.run(h.client.resume())).toMatchObject({ driven: 0, heldElsewhere: 1 });
    await h.rt.advance(10_000 + 5_000 + TAKEOVER_MARGIN_MS);
    const outcomes: Outcome[] = [];
    expect(await h.rt.run(h.client.resume({ onOutcome: (o) => void outcomes.push(o) }))).toMatchObject({
      driven: 1,
      succeeded: 1,
    });
    expect(outcomes).toMatchObject([{ key: 'orphan', ok: true }]);
    const record = await h.client.get('orphan');
    expect(record?.attempts.map((a) => a.class)).toEqual(['ambiguous', 'completed']);
    expect(record?.epoch).toBeGreaterThan(3);
  });

  it('a stale owner cannot overwrite a newer one (fencing)', async () => {
    const h = await harness();
    const hold = h.server.hold();
    const first = h.client.send({ method: 'POST', url: '/payments', key: 'fence', json: {} });
    await hold.arrived;
    // Another process takes the operation over (as after a lease expiry): new owner, new epoch.
    const taken = await h.store.update('fence', (r) =>
      r === undefined ? r : { ...r, epoch: r.epoch + 1, lease: { owner: 'other', until: h.rt.now() + 60_000 } },
    );
    hold.release();
    // Until the engine is idle: the held response has arrived and the stale
    // owner's write of its outcome has been tried (advance(0) waits for every
    // tracked request and store operation, and moves no time).
    await h.rt.advance(0);
    expect(h.rt.inFlight).toBe(0);
    expect(h.server.ledger.requestsFor('fence').map((r) => r.outcome)).toEqual(['effect']);
    const after = await h.store.get('fence');
    // The stale owner's outcome was refused: the newer owner's record stands untouched.
    expect(after).toEqual(taken);
    expect(after?.state).toBe('in_flight');
    await h.client.close();
    await first.catch(() => undefined);
  });

  it('a second send of a finished failure answers from the store without network', async () => {
    const h = await harness({ policy: { maxAttempts: 1 } });
    h.server.script({ kind: 'status', status: 418 });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'fx', json: {} })).catch(() => undefined);
    const again = await h.client
      .send({ method: 'POST', url: '/payments', key: 'fx', json: {} })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OperationError);
    expect(isOncelyError(again)).toBe(true);
    expect(h.server.ledger.requests).toHaveLength(1);
  });

  it('the deadline never exceeds the key retention', async () => {
    const h = await harness({
      endpoints: { 'POST /payments': { deadlineMs: 10 * 3_600_000, keyRetentionMs: 3_600_000 } },
    });
    const { key } = await h.client.enqueue({ method: 'POST', url: '/payments', json: {} });
    const record = await h.client.get(key);
    expect(record!.deadlineAt - record!.createdAt).toBe(3_600_000);
  });

  it('discard forgets a finished operation; sweep removes expired ones', async () => {
    const h = await harness({ policy: { retainMs: 1_000 } });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'd1', json: {} }));
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'd2', json: {} }));
    await h.client.discard('d1');
    expect(await h.client.get('d1')).toBeUndefined();
    await h.rt.advance(1_001);
    expect(await h.client.sweep()).toBe(1);
    expect(await h.client.list()).toHaveLength(0);
  });

  it('corrupt records are reported as quarantined events; others keep working', async () => {
    const h = await harness();
    const reports: string[] = [];
    h.client.on('quarantined', ({ id }) => reports.push(id));
    await h.store.put(sampleRecord('broken'));
    h.store.corrupt('broken', '{"v":1,');
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'fine', json: {} }));
    expect((await h.client.resume()).driven).toBe(0);
    expect(reports).toEqual(['broken']);
    expect((await h.client.quarantined()).map((q) => q.id)).toEqual(['broken']);
    expect((await h.client.get('fine'))?.state).toBe('succeeded');
    void memoryStore;
  });
});

describe('a failing credentials callback', () => {
  it('sends nothing, counts no attempt, and the operation goes on once credentials come back', async () => {
    let calls = 0;
    const h = await harness({
      policy: { maxAttempts: 1 },
      headers: () => {
        calls++;
        if (calls < 3) throw new Error('token service down');
        return { authorization: 'Bearer ok' };
      },
    });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'cred', json: {} }));
    expect(result.status).toBe(201);
    const record = await h.client.get('cred');
    expect(record?.attempts.map((a) => [a.class, a.sent])).toEqual([
      ['not_sent', 'not'],
      ['not_sent', 'not'],
      ['completed', 'definitely'],
    ]);
    expect(record?.attempts[0]?.error).toMatch(/headers callback failed: token service down/);
    expect(h.server.ledger.requests).toHaveLength(1);
  });
});

describe('one caller signal shared by many sends', () => {
  it('adds one listener to it, not one per operation (no MaxListeners warning), and still aborts them all', async () => {
    const h = await harness();
    h.server.setOutage({ status: 503, retryAfter: 5 });
    const controller = new AbortController();
    let added = 0;
    const original = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      original(...args);
    }) as AbortSignal['addEventListener'];
    const sends = Array.from({ length: 20 }, (_, i) =>
      h.client
        .send({ method: 'POST', url: '/payments', key: `sig${i}`, json: {}, signal: controller.signal })
        .catch((e: unknown) => e),
    );
    h.client.on('retry:scheduled', () => {
      if (h.events.filter((e) => e.name === 'retry:scheduled').length === 20) controller.abort();
    });
    const errors = await h.rt.run(Promise.all(sends));
    expect(errors.every((e) => (e as { reason?: string }).reason === 'aborted')).toBe(true);
    expect(added).toBe(1);
  });
});
