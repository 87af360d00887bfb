/**
 * Issue 14, item 2: what a fetch or ky user expects. No method is a GET (a
 * body without one is refused), `baseUrl` is joined like ky's `prefixUrl`
 * and endpoint rules match the path under it, and an abort by the caller's
 * signal rejects with an `AbortError`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hasErrorCode, InvalidRequestError, isOncelyError, OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('the method defaults as in fetch', () => {
  it('a request without a method is a GET, sent without a key', async () => {
    const h = await harness();
    const result = await h.rt.run(h.client.send({ url: '/items/1' }));
    expect(result.status).toBe(200);
    expect(h.server.ledger.requests).toMatchObject([{ method: 'GET', path: '/items/1', outcome: 'read' }]);
    expect(h.server.ledger.requests[0]?.key).toBeUndefined();
  });

  it('a body without a method is refused before anything is stored or sent', async () => {
    const h = await harness();
    // A compile error in TypeScript (test/types/request.test-d.ts); JavaScript callers meet the run-time check.
    // @ts-expect-error a body needs a method
    const error = await h.client.send({ url: '/payments', json: { amount: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ field: 'method' });
    expect((error as Error).message).toContain("e.g. method: 'POST'");
    expect(await h.client.list()).toHaveLength(0);
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});

describe('baseUrl is joined, and endpoint rules match the path under it', () => {
  it("'/payments' under …/v1/ goes to /v1/payments and gets the rule 'POST /payments'", async () => {
    const h = await harness();
    const client = h.another({
      baseUrl: `${h.server.url}/v1/`,
      endpoints: { 'POST /payments': { maxAttempts: 1 } },
    });
    h.server.script({ kind: 'status', status: 500 });
    const error = await h.rt
      .run(client.send({ method: 'POST', url: '/payments', key: 'join-1', json: { amount: 1 } }))
      .catch((e: unknown) => e);
    // The rule's maxAttempts: 1 applied: one 500 (which may have done something) and the operation stopped.
    expect(error).toMatchObject({ reason: 'attempts', status: 500 });
    expect(h.server.ledger.requests.map((r) => r.path)).toEqual(['/v1/payments']);
    expect((await client.get('join-1'))?.policy).toBe('POST /payments');
  });
});

describe("an abort by the caller's signal rejects with the platform's AbortError", () => {
  it('while waiting for a retry: an AbortError carrying the oncely details', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503, retryAfter: 5 });
    const controller = new AbortController();
    h.client.on('retry:scheduled', () => controller.abort());
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'ab-1', json: {}, signal: controller.signal }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(error).toMatchObject({ key: 'ab-1', state: 'failed', reason: 'aborted', mayHaveTakenEffect: false });
    expect((error as { remediation?: unknown }).remediation).toEqual(expect.any(String));
    // The oncely guards keep answering; the OperationError itself is the cause.
    expect(isOncelyError(error)).toBe(true);
    expect(hasErrorCode(error, 'operation_failed')).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(OperationError);
    expect(((error as Error).cause as OperationError).key).toBe('ab-1');
  });

  it('mid-request: the AbortError says the request may have taken effect', async () => {
    const h = await harness();
    const hold = h.server.hold();
    const controller = new AbortController();
    const pending = h.rt.run(
      h.client.send({ method: 'POST', url: '/payments', key: 'ab-2', json: {}, signal: controller.signal }),
    );
    await hold.arrived;
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    hold.release();
    expect((error as DOMException).name).toBe('AbortError');
    expect(error).toMatchObject({ key: 'ab-2', state: 'unknown', reason: 'aborted', mayHaveTakenEffect: true });
  });

  it('enqueue: the settled outcome carries the AbortError too', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503, retryAfter: 5 });
    const controller = new AbortController();
    h.client.on('retry:scheduled', () => controller.abort());
    const { settled } = await h.client.enqueue({
      method: 'POST',
      url: '/payments',
      key: 'ab-3',
      json: {},
      signal: controller.signal,
    });
    const outcome = await h.rt.run(settled);
    expect(outcome).toMatchObject({ ok: false, state: 'failed' });
    expect(outcome.error?.name).toBe('AbortError');
  });

  it('a signal from AbortSignal.timeout() rejects as fetch does: a DOMException named TimeoutError', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503, retryAfter: 5 });
    const controller = new AbortController();
    // The reason AbortSignal.timeout() aborts with, given by hand: no waiting on the wall clock.
    h.client.on('retry:scheduled', () => controller.abort(new DOMException('signal timed out', 'TimeoutError')));
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'ab-5', json: {}, signal: controller.signal }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('TimeoutError');
    expect(error).toMatchObject({ key: 'ab-5', state: 'failed', reason: 'aborted', mayHaveTakenEffect: false });
    expect(isOncelyError(error)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(OperationError);
  });

  it('another caller reading the aborted operation (its own signal live) gets the OperationError', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503, retryAfter: 5 });
    const controller = new AbortController();
    h.client.on('retry:scheduled', () => controller.abort());
    const request = { method: 'POST', url: '/payments', key: 'ab-4', json: {} };
    await h.rt.run(h.client.send({ ...request, signal: controller.signal })).catch(() => undefined);
    const error = await h.client.send(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ name: 'OperationError', reason: 'aborted' });
  });
});
