/**
 * The promise at the edges: every stop after an attempt that may have taken
 * effect says so, calls after close() write nothing, discard never forgets a
 * possible charge, unsent attempts back off and do not grow the record,
 * "still in progress" answers do not burn the attempt budget, a probe that
 * came back unsent never shuts the gate for good, scope order survives
 * concurrent writes, and nothing escapes untyped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_KEPT_ATTEMPTS } from '../../src/flow/decide/attempt-history.js';
import { defineProfile, InvalidStateError, isOncelyError, memoryStore, OperationError } from '../../src/index.js';
import { HostGate } from '../../src/policy/gate.js';
import type { OperationStore } from '../../src/store/store.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { freePort } from '../helpers/free-port.js';
import { closeAll, harness } from '../helpers/harness.js';
import { fileStore } from '../helpers/machine.js';

afterEach(async () => {
  await closeAll();
  removeTempDirs();
});

describe('"may have taken effect" is sticky', () => {
  it('a 401 after an ambiguous attempt: blocked, flagged, and the remediation never says discard', async () => {
    const h = await harness({ policy: { maxAttempts: 5 } });
    h.server.script({ kind: 'reset-after-commit' }, { kind: 'status', status: 401 });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'b1', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    const e = error as OperationError;
    expect(e).toMatchObject({ state: 'blocked', key: 'b1', mayHaveTakenEffect: true });
    expect(e.remediation).toMatch(/may have taken effect/);
    expect(e.remediation).not.toMatch(/or discard\(key\)/);
    expect((await h.client.get('b1'))?.failure?.mayHaveTakenEffect).toBe(true);
    expect(h.server.ledger.effectCount('b1')).toBe(1);
    // Discarding it would invite paying again under a new key: refused unless forced.
    await expect(h.client.discard('b1')).rejects.toBeInstanceOf(InvalidStateError);
    await h.client.discard('b1', { force: true });
    expect(await h.client.get('b1')).toBeUndefined();
  });

  it('a 401 with no earlier attempt: blocked, not flagged, discard allowed', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 401 });
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'b2', json: {} }))
      .catch((e) => e)) as OperationError;
    expect(error).toMatchObject({ state: 'blocked', mayHaveTakenEffect: false });
    expect(error.remediation).toMatch(/or discard\(key\)/);
    await h.client.discard('b2');
    expect(await h.client.get('b2')).toBeUndefined();
  });
});

describe('close() and the calls after it', () => {
  it('send and enqueue after close() are refused before anything is written', async () => {
    const h = await harness();
    await h.client.close();
    await expect(h.client.send({ method: 'POST', url: '/payments', key: 'late1', json: {} })).rejects.toBeInstanceOf(
      InvalidStateError,
    );
    await expect(h.client.enqueue({ method: 'POST', url: '/payments', key: 'late2', json: {} })).rejects.toBeInstanceOf(
      InvalidStateError,
    );
    expect(await h.store.list()).toEqual([]);
    expect(h.server.ledger.requests).toHaveLength(0);
  });

  it('a send interrupted by close() says the operation is stored and will be resumed', async () => {
    const h = await harness({ policy: { maxAttempts: 5 } });
    h.server.script({ kind: 'status', status: 503, retryAfter: 30 });
    const retrying = new Promise<void>((resolve) => h.client.on('retry:scheduled', () => resolve()));
    const pending = h.client.send({ method: 'POST', url: '/payments', key: 'c1', json: {} }).catch((e: unknown) => e);
    await h.rt.run(retrying);
    await h.client.close();
    const error = (await pending) as OperationError;
    expect(isOncelyError(error)).toBe(true);
    expect(error).toMatchObject({ key: 'c1', state: 'pending' });
    expect(error.message).toMatch(/stays stored and will be resumed/);
    expect(error.remediation).toMatch(/Do not send it again under a new key/);
    expect((await h.store.get('c1'))?.state).toBe('pending');
  });
});

describe('discard', () => {
  it('is refused while another owner holds a live lease, even between attempts', async () => {
    const h = await harness({ policy: { maxAttempts: 5 } });
    h.server.script({ kind: 'status', status: 503, retryAfter: 30 });
    const worker = h.another();
    const retrying = new Promise<void>((resolve) => worker.on('retry:scheduled', () => resolve()));
    void worker.send({ method: 'POST', url: '/payments', key: 'd1', json: {} }).catch(() => undefined);
    await h.rt.run(retrying);
    // Another process (this client) tries to discard while the worker waits for its retry.
    await expect(h.client.discard('d1')).rejects.toThrow(/held by/);
    expect((await h.store.get('d1'))?.state).toBe('pending');
  });
});

describe('refused connections', () => {
  it('back off exponentially, cost no attempts, and keep a bounded history', async () => {
    const port = await freePort();
    const h = await harness({
      baseUrl: `http://127.0.0.1:${port}`,
      policy: {
        deadlineMs: 3_600_000,
        maxAttempts: 2,
        backoff: { jitter: 'none', baseDelayMs: 100, maxDelayMs: 5_000 },
        // Without the host gate, which would hold the retries for its probe (test/client/refused-host.test.ts).
        budget: false,
      },
    });
    const delays: number[] = [];
    h.client.on('retry:scheduled', (e) => delays.push(e.delayMs));
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'r1', json: {} }))
      .catch((e) => e)) as OperationError;
    expect(error).toMatchObject({ state: 'failed', reason: 'deadline', mayHaveTakenEffect: false });
    // 100, 200, 400, … up to 5 s: no hot loop.
    expect(delays.slice(0, 6)).toEqual([100, 200, 400, 800, 1_600, 3_200]);
    expect(Math.max(...delays)).toBe(5_000);
    // About an hour of 5 s waits: ~720 attempts, yet the record keeps the first and the latest.
    const record = await h.client.get('r1');
    expect(delays.length).toBeGreaterThan(600);
    expect(record?.attempts.length).toBeLessThanOrEqual(MAX_KEPT_ATTEMPTS);
    expect(record?.attempts[0]?.n).toBe(1);
    expect(record?.attemptsOmitted?.count).toBe((record?.attempts.at(-1)?.n ?? 0) - (record?.attempts.length ?? 0));
    expect(record?.attemptsOmitted).toMatchObject({ counted: 0, mayHaveTakenEffect: false });
    expect(JSON.stringify(record).length).toBeLessThan(20_000);
  });
});

describe('"still in progress" answers', () => {
  it('do not count toward maxAttempts, and wait at least a second, growing', async () => {
    const h = await harness({ policy: { maxAttempts: 2, deadlineMs: 120_000 } });
    for (let i = 0; i < 4; i++) h.server.script({ kind: 'status', status: 409 });
    const delays: number[] = [];
    h.client.on('retry:scheduled', (e) => delays.push(e.delayMs));
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} }));
    expect(result.status).toBe(201);
    expect(h.server.ledger.requestsFor('p1')).toHaveLength(5);
    expect(delays).toHaveLength(4);
    expect(delays[0]).toBeGreaterThanOrEqual(1_000);
    expect(delays[1]).toBeGreaterThanOrEqual(2_000);
    expect(delays[3]).toBeGreaterThanOrEqual(8_000);
  });

  it('a random delay that would overshoot the deadline is shortened so a last attempt is made', async () => {
    const h = await harness({
      policy: { maxAttempts: 10, deadlineMs: 5_000, backoff: { jitter: 'none', baseDelayMs: 500 } },
    });
    for (let i = 0; i < 4; i++) h.server.script({ kind: 'status', status: 503 });
    const delays: number[] = [];
    h.client.on('retry:scheduled', (e) => delays.push(e.delayMs));
    // 500, 1 000, 2 000 ms, then 4 000 would pass the deadline with 1.5 s left: wait half of it instead.
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p2', json: {} }));
    expect(result.status).toBe(201);
    expect(delays).toEqual([500, 1_000, 2_000, 750]);
    expect(h.server.ledger.requestsFor('p2')).toHaveLength(5);
  });
});

describe('the outage gate', () => {
  it('a probe that comes back unsent lets the next probe go at once', () => {
    const gate = new HostGate({ capacity: 1, ratio: 0.1, probeIntervalMs: 1_000, rampMs: 1_000 });
    const random = () => 0;
    expect(gate.admitRetry('a', 0, random)).toMatchObject({ kind: 'go', probe: false });
    // Budget spent: the gate opens and lets one probe go.
    expect(gate.admitRetry('b', 0, random)).toMatchObject({ kind: 'go', probe: true });
    expect(gate.admitRetry('c', 0, random)).toMatchObject({ kind: 'hold' });
    gate.releaseProbe();
    expect(gate.admitRetry('c', 0, random)).toMatchObject({ kind: 'go', probe: true });
  });

  it('end to end: probes refused while the server restarts, then it recovers and every operation completes', async () => {
    const h = await harness({ policy: { deadlineMs: 120_000, budget: { capacity: 1, ratio: 0.1 } } });
    h.server.setOutage({ status: 503, retryAfter: 1 });
    const ops = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        h.client.enqueue({ method: 'POST', url: '/payments', key: `g${i}`, json: { i } }),
      ),
    );
    // Run until the gate holds operations, then make every request unsendable for a while.
    const held = new Promise<void>((resolve) => h.client.on('held', () => resolve()));
    await h.rt.run(held);
    const port = Number(new URL(h.server.url).port);
    h.server.setOutage(undefined);
    await h.server.close();
    await h.rt.advance(5_000);
    // The server comes back on the same port.
    const { startReferenceServer } = await import('../../src/testing.js');
    const back = await startReferenceServer({ runtime: h.rt, port });
    try {
      const outcomes = await h.rt.run(Promise.all(ops.map((o) => o.settled)));
      expect(outcomes.map((o) => o.state)).toEqual(ops.map(() => 'succeeded'));
      expect(back.ledger.totalEffects()).toBe(5);
    } finally {
      await back.close();
    }
  });
});

describe('scope order', () => {
  it('twenty operations enqueued at once in one scope are sent in call order, with the file store', async () => {
    const store = fileStore({ dir: tempDir() });
    try {
      await scopeOrder(store);
    } finally {
      // A client leaves open a store it was given: closed before its directory is removed.
      await closeAll();
      await store.close();
    }
  });

  it('and with the memory store, though all share one millisecond', async () => {
    await scopeOrder(undefined);
  });

  async function scopeOrder(store: OperationStore | undefined): Promise<void> {
    const h = await harness(store === undefined ? {} : { store });
    const keys = Array.from({ length: 20 }, (_, i) => `s${i}`);
    const enqueued = await Promise.all(
      keys.map((key) => h.client.enqueue({ method: 'POST', url: '/notes', key, scope: 'cart', json: {} })),
    );
    await h.rt.run(Promise.all(enqueued.map((e) => e.settled)));
    expect(h.server.ledger.requests.map((r) => r.key)).toEqual(keys);
    // Write-ahead order is recorded: strictly growing in call order, even within one millisecond.
    const seqs = await Promise.all(keys.map(async (k) => (await h.client.get(k))?.seq));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
  }
});

describe("a crashed owner's operation", () => {
  it('resume() says what it left to another owner; waiting for the lease still settles it by one replay', async () => {
    const h = await harness({ connectivity: { online: () => false, onOnline: () => () => undefined } });
    // The first owner's request reached the server and committed, then that process died mid-attempt.
    const committed = await fetch(`${h.server.url}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'ck' },
      body: '{}',
    });
    expect(committed.status).toBe(201);
    await h.client.enqueue({ method: 'POST', url: '/payments', key: 'ck', json: {} });
    await h.client.close();
    const t0 = h.rt.now();
    await h.store.update('ck', (r) =>
      r === undefined
        ? r
        : {
            ...r,
            state: 'in_flight',
            deadlineAt: t0 + 20_000,
            attempts: [{ n: 1, owner: 'dead', startedAt: t0, sent: 'maybe' }],
            lease: { owner: 'dead', until: t0 + 40_000 },
          },
    );
    // Restarted under a new owner id: the operation is not silently skipped.
    const restarted = h.another({
      owner: 'new',
      connectivity: { online: () => true, onOnline: () => () => undefined },
    });
    const first = await h.rt.run(restarted.resume());
    expect(first).toMatchObject({ driven: 0, heldElsewhere: 1, heldUntil: t0 + 40_000 });
    // Waiting for the lease: it expires after the deadline, yet the one attempt that can return the stored result is made.
    const second = await h.rt.run(restarted.resume({ waitForLeases: true }));
    expect(second).toMatchObject({ driven: 1, succeeded: 1 });
    expect(h.server.ledger.requestsFor('ck').map((r) => r.outcome)).toEqual(['effect', 'replay']);
  });

  it('leases the engine writes never reach past the deadline plus one attempt timeout', async () => {
    const h = await harness({
      leaseMs: 600_000,
      policy: { deadlineMs: 5_000, attemptTimeoutMs: 1_000, maxAttempts: 3 },
    });
    h.server.script({ kind: 'status', status: 503, retryAfter: 2 });
    const retrying = new Promise<void>((resolve) => h.client.on('retry:scheduled', () => resolve()));
    void h.client.send({ method: 'POST', url: '/payments', key: 'lc', json: {} }).catch(() => undefined);
    await h.rt.run(retrying);
    const record = await h.client.get('lc');
    expect(record?.lease?.until).toBeLessThanOrEqual((record?.deadlineAt ?? 0) + 1_000);
  });
});

describe('leases and clocks', () => {
  it('a wall-clock step forward while the holder is on the wire does not let another owner take over', async () => {
    const h = await harness({ owner: 'A', policy: { attemptTimeoutMs: 10_000 } });
    const hold = h.server.hold({ key: 'lk' });
    const sending = h.client.send({ method: 'POST', url: '/payments', key: 'lk', json: {} });
    await h.rt.run(hold.arrived);
    const b = h.another({ owner: 'B' });
    const bAttempts: number[] = [];
    b.on('attempt:started', (e) => bAttempts.push(e.attempt));
    const draining = b.resume({ waitForLeases: true });
    await h.rt.advance(0); // B has looked at A's lease once.
    h.rt.stepClock(60 * 60_000);
    await h.rt.advance(5_000); // B looked five more times, with the wall clock an hour ahead.
    expect(bAttempts).toEqual([]);
    hold.release();
    expect((await h.rt.run(sending)).status).toBe(201);
    await h.rt.run(draining);
    expect(bAttempts).toEqual([]);
    expect(h.server.ledger.effectCount('lk')).toBe(1);
  });
});

describe('the stored policy', () => {
  it('another process with other endpoint rules finishes an operation under the rules it started under', async () => {
    const offline = { online: () => false, onOnline: () => () => undefined };
    const h = await harness(
      {
        connectivity: offline,
        endpoints: {
          'POST /payments': { profile: defineProfile({ name: 'acme', keyHeader: 'X-Request-Key' }), maxAttempts: 7 },
        },
      },
      { keyHeader: 'X-Request-Key' },
    );
    await h.client.enqueue({ method: 'POST', url: '/payments', key: 'pol1', json: { amount: 5 } });
    await h.client.close();
    // A worker (or the CLI) without that rule: it must not send the key under another header.
    const worker = h.another({ connectivity: { online: () => true, onOnline: () => () => undefined }, endpoints: {} });
    const summary = await h.rt.run(worker.resume());
    expect(summary.succeeded).toBe(1);
    expect(h.server.ledger.requestsFor('pol1').map((r) => r.outcome)).toEqual(['effect']);
    expect((await worker.get('pol1'))?.policySnapshot).toMatchObject({ name: 'POST /payments', maxAttempts: 7 });
  });

  it('a record without a stored policy whose rule is unknown here is not driven under the default', async () => {
    const h = await harness();
    const { sampleRecord } = await import('../../src/store.js');
    await h.store.put(
      sampleRecord('legacy', {
        policy: 'POST /elsewhere',
        request: { method: 'POST', url: `${h.server.url}/x`, headers: {} },
      }),
    );
    let failure: unknown;
    await h.rt.run(
      h.client.resume({
        onOutcome: (o) => {
          failure = o.error;
        },
      }),
    );
    expect(failure).toBeInstanceOf(OperationError);
    expect((failure as OperationError).message).toMatch(/POST \/elsewhere/);
    expect(h.server.ledger.requests).toHaveLength(0);
    expect((await h.store.get('legacy'))?.state).toBe('pending');
  });
});

describe('nothing escapes untyped', () => {
  it('a store that fails after the request left: a typed error with key and state; resume() completes it', async () => {
    const inner = memoryStore();
    let failWrites = false;
    const flaky = forwardingStore(inner, {
      update: (k, fn) =>
        failWrites ? Promise.reject(new Error('ENOSPC: no space left on device')) : inner.update(k, fn),
    });
    const h = await harness({ store: flaky, owner: 'worker-1' });
    const started = new Promise<void>((resolve) => h.client.on('attempt:started', () => resolve()));
    const hold = h.server.hold();
    const pending = h.client.send({ method: 'POST', url: '/payments', key: 'e1', json: {} }).catch((e: unknown) => e);
    await h.rt.run(started);
    await h.rt.run(hold.arrived);
    failWrites = true;
    hold.release();
    const error = (await h.rt.run(pending)) as OperationError;
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ key: 'e1', state: 'in_flight', mayHaveTakenEffect: true });
    expect(error.message).toMatch(/ENOSPC/);
    failWrites = false;
    await h.client.close();
    const again = h.another({ store: flaky, owner: 'worker-1' });
    const summary = await h.rt.run(again.resume());
    expect(summary.succeeded).toBe(1);
    expect(h.server.ledger.effectCount('e1')).toBe(1);
  });

  it('an onUnauthorized that throws ends blocked with the reason, not stuck pending', async () => {
    const h = await harness({
      onUnauthorized: () => {
        throw new Error('refresh token expired');
      },
    });
    h.server.script({ kind: 'status', status: 401 });
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'u1', json: {} }))
      .catch((e) => e)) as OperationError;
    expect(error).toMatchObject({ state: 'blocked', key: 'u1', status: 401 });
    expect(error.message).toMatch(/refresh token expired/);
    expect((await h.client.get('u1'))?.lease).toBeUndefined();
  });

  it('a headers callback that never answers cannot keep send() past its deadline', async () => {
    const h = await harness({
      headers: () => new Promise<Record<string, string>>(() => undefined),
      policy: { deadlineMs: 10_000 },
    });
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'h1', json: {} }))
      .catch((e) => e)) as OperationError;
    expect(error).toMatchObject({ state: 'failed', reason: 'deadline', key: 'h1' });
    expect(h.server.ledger.requests).toHaveLength(0);
    expect(error.history.every((a) => a.sent === 'not')).toBe(true);
  });
});

describe('a claim is given back when its policy cannot be known', () => {
  it('a record naming a rule this client lacks (no stored policy): the error names the rule, the lease is released', async () => {
    const h = await harness();
    const { key } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'old-1', json: {} });
    await h.rt.run(h.client.close());
    // A record written before policies were stored with it, under a rule this client does not have.
    const stored = (await h.store.get(key))!;
    const sent = h.server.ledger.requestsFor(key).length;
    const { policySnapshot: _s, lease: _l, ...older } = stored;
    await h.store.put({ ...older, policy: 'POST /legacy', state: 'pending' });
    const other = h.another({ owner: 'worker-b' });
    const summary = await h.rt.run(other.resume());
    expect(summary).toMatchObject({ driven: 1, unfinished: 1, failed: 0 });
    const error = await h.rt
      .run(other.send({ method: 'POST', url: '/payments', key, json: {} }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect((error as OperationError).message).toContain('"POST /legacy", which this client does not have');
    const after = (await h.store.get(key))!;
    // It had its chance: this client claimed it (the epoch moved) and gave the lease back at once.
    expect(after.epoch).toBeGreaterThan(stored.epoch);
    expect(after.lease).toBeUndefined();
    expect(after.state).toBe('pending');
    expect(h.server.ledger.requestsFor(key)).toHaveLength(sent);
  });
});

describe('an operation removed from the store while its attempt is on the wire', () => {
  it("its caller's outcome keeps the state the loop knew (in_flight) and says it may have taken effect", async () => {
    const h = await harness();
    const hold = h.server.hold({ key: 'gone' });
    const { settled } = await h.client.enqueue({ method: 'POST', url: '/payments', key: 'gone', json: {} });
    await h.rt.run(hold.arrived);
    expect((await h.store.get('gone'))?.state).toBe('in_flight');
    // Removed behind the client's back (another tool on the same store).
    await h.store.delete('gone');
    hold.release();
    const outcome = await h.rt.run(settled);
    expect(outcome).toMatchObject({ ok: false, state: 'in_flight' });
    expect(outcome.ok || outcome.error).toMatchObject({ code: 'operation_failed', mayHaveTakenEffect: true });
    expect(h.server.ledger.effectCount('gone')).toBe(1);
  });
});
