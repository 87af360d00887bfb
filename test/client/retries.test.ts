/**
 * Attempts, classes and terminal states against the reference server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OperationError } from '../../src/index.js';
import { freePort } from '../helpers/free-port.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

function attemptTimes(h: Awaited<ReturnType<typeof harness>>, key: string): number[] {
  return h.server.ledger.requestsFor(key).map((r) => r.at);
}

describe('retries reuse the one key', () => {
  it('every attempt carries the same key, minted once before the first', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503 }, { kind: 'reset-before-commit' }, { kind: 'status', status: 500 });
    const result = await h.rt.run(h.client.send({ url: '/payments', json: { amount: 1 } }));
    const requests = h.server.ledger.requests;
    expect(requests).toHaveLength(4);
    expect(new Set(requests.map((r) => r.key))).toEqual(new Set([result.key]));
    expect(h.server.ledger.effectCount(result.key)).toBe(1);
    // The record was written before the first byte left: 'enqueued' precedes 'attempt:started'.
    expect(h.events.map((e) => e.name).slice(0, 2)).toEqual(['enqueued', 'attempt:started']);
  });

  it('a timeout after the request was sent is retried with the same key and gets the replay', async () => {
    const h = await harness({ policy: { attemptTimeoutMs: 1_000 } });
    const hold = h.server.hold();
    const pending = h.rt.run(h.client.send({ url: '/payments', key: 'slow', json: { amount: 2 } }));
    await hold.arrived;
    const result = await pending;
    hold.release();
    expect(result.key).toBe('slow');
    expect(result.replayed).toBe(true);
    expect(h.server.ledger.effectCount('slow')).toBe(1);
    const record = await h.client.get('slow');
    expect(record?.attempts.map((a) => a.class)).toEqual(['ambiguous', 'completed']);
  });

  it('attempts run out after an ambiguous attempt → unknown, never failed', async () => {
    const h = await harness({ policy: { maxAttempts: 2 } });
    h.server.script({ kind: 'reset-after-commit' }, { kind: 'status', status: 500 });
    const error = await h.rt.run(h.client.send({ url: '/payments', key: 'amb', json: {} })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ state: 'unknown', reason: 'attempts', key: 'amb' });
    expect((error as OperationError).attempts).toHaveLength(2);
    expect((error as OperationError).remediation).toMatch(/reconcile/i);
  });

  it('the deadline runs out after an ambiguous attempt → unknown', async () => {
    const h = await harness({ policy: { deadlineMs: 5_000, attemptTimeoutMs: 1_000, maxAttempts: 100 } });
    for (let i = 0; i < 50; i++) h.server.script({ kind: 'reset-after-commit' });
    const error = await h.rt.run(h.client.send({ url: '/payments', key: 'dl', json: {} })).catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'unknown', reason: 'deadline' });
    expect(h.server.ledger.effectCount('dl')).toBe(1);
  });

  it('only "not applied" answers (503) spend no attempts: the deadline ends them → failed', async () => {
    const h = await harness({ policy: { maxAttempts: 3, deadlineMs: 20_000 } });
    h.server.script(...Array.from({ length: 40 }, () => ({ kind: 'status' as const, status: 503 })));
    const error = await h.rt.run(h.client.send({ url: '/payments', key: 'f', json: {} })).catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', reason: 'deadline', status: 503, mayHaveTakenEffect: false });
    const requests = h.server.ledger.requestsFor('f').length;
    expect(requests).toBeGreaterThan(3); // more than maxAttempts: "not applied" answers are free
    expect(requests).toBeLessThan(40); // but paced by growing waits, not hammered
    expect(h.server.ledger.effectCount('f')).toBe(0);
  });

  it('502 (a gateway may have given up while the upstream worked) ends unknown', async () => {
    const h = await harness({ policy: { maxAttempts: 2 } });
    h.server.script({ kind: 'status', status: 502 }, { kind: 'status', status: 502 });
    await expect(h.rt.run(h.client.send({ url: '/payments', key: 'g', json: {} }))).rejects.toMatchObject({
      state: 'unknown',
    });
  });

  it('a refused connection is not_sent: it burns no attempt, only deadline', async () => {
    const h = await harness({ policy: { maxAttempts: 1, deadlineMs: 3_000 } });
    const dead = `http://127.0.0.1:${await freePort()}`;
    const error = await h.rt
      .run(h.client.send({ url: `${dead}/payments`, key: 'off', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', reason: 'deadline' });
    const record = await h.client.get('off');
    expect(record?.attempts.length).toBeGreaterThan(2); // more than maxAttempts: unsent attempts are free
    expect(record?.attempts.every((a) => a.class === 'not_sent' && a.sent === 'not')).toBe(true);
  });
});

describe('refusals are not retried', () => {
  it.each([400, 401, 403, 404, 422])('%d → blocked with the status and a remediation', async (status) => {
    const h = await harness();
    h.server.script({ kind: 'status', status, body: { error: 'nope' } });
    const error = await h.rt
      .run(h.client.send({ url: '/payments', key: `s${status}`, json: {} }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ state: 'blocked', reason: 'correctable', status });
    expect((error as OperationError).remediation).toMatch(/retry\(key\)/);
    expect(h.server.ledger.requests).toHaveLength(1);
  });

  it('a blocked operation resent with retry(key) keeps its key', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 403 });
    await h.rt.run(h.client.send({ url: '/payments', key: 'b1', json: {} })).catch(() => undefined);
    const outcome = await h.rt.run(h.client.retry('b1'));
    expect(outcome).toMatchObject({ ok: true, state: 'succeeded', key: 'b1' });
    expect(h.server.ledger.requestsFor('b1').map((r) => r.key)).toEqual(['b1', 'b1']);
    expect(h.server.ledger.effectCount('b1')).toBe(1);
  });
});

describe('server hints', () => {
  it.each([429, 503])(
    '%d with Retry-After: 2 waits at least 2 s and at most 2 s plus the jitter bound',
    async (status) => {
      const h = await harness({ policy: { retryAfter: { jitterMs: 500 } } });
      h.server.script({ kind: 'status', status, retryAfter: 2 });
      const result = await h.rt.run(h.client.send({ url: '/payments', json: {} }));
      const [first, second] = attemptTimes(h, result.key);
      expect(second! - first!).toBeGreaterThanOrEqual(2_000);
      expect(second! - first!).toBeLessThanOrEqual(2_500);
    },
  );

  it('Retry-After as an HTTP date is honoured', async () => {
    const h = await harness({ policy: { retryAfter: { jitterMs: 0 } } });
    h.server.script({ kind: 'status', status: 503, retryAfter: new Date(h.rt.now() + 5_000) });
    const result = await h.rt.run(h.client.send({ url: '/payments', json: {} }));
    const [first, second] = attemptTimes(h, result.key);
    // HTTP dates have whole-second precision.
    expect(second! - first!).toBeGreaterThanOrEqual(4_000);
    expect(second! - first!).toBeLessThanOrEqual(5_000);
  });

  it('Retry-After beyond the deadline stops at once', async () => {
    const h = await harness({ policy: { deadlineMs: 10_000 } });
    h.server.script({ kind: 'status', status: 503, retryAfter: 30 });
    const error = await h.rt.run(h.client.send({ url: '/payments', key: 'late', json: {} })).catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', reason: 'deadline' });
    expect(h.server.ledger.requests).toHaveLength(1);
    expect(h.rt.now() - (await h.client.get('late'))!.createdAt).toBeLessThan(100);
  });
});
