/**
 * A retryable answer marked as a replay is the outcome the server stored for
 * this key: resending the key can only replay it again. It is final after
 * one request, with the effect its status tells: 503/429 were not applied
 * (`failed`), 500/502/504 may have been (`unknown`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineProfile, OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

const replayed = { 'Idempotent-Replayed': 'true' };

describe('a replayed error is final for its key', () => {
  it.each([
    [503, 'failed'],
    [429, 'failed'],
    [500, 'unknown'],
    [502, 'unknown'],
    [504, 'unknown'],
  ])('replayed %d → one request, ends %s', async (status, state) => {
    const h = await harness();
    h.server.script({ kind: 'status', status, headers: replayed });
    const key = `rp${status}`;
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key, json: {} }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ state, reason: 'permanent', status, key });
    expect(h.server.ledger.requestsFor(key)).toHaveLength(1);
    const record = await h.client.get(key);
    expect(record?.attempts).toHaveLength(1);
    expect(record?.attempts[0]?.error).toMatch(/replayed \(Idempotent-Replayed: true\)/);
    expect(record?.failure?.message).toMatch(/replayed/);
  });

  it('the profile replay marker counts too, and wins over Stripe-Should-Retry', async () => {
    const acme = defineProfile({ name: 'acme', replayedHeader: 'X-Replayed' });
    const h = await harness({ endpoints: { 'POST /acme': { profile: acme } } });
    h.server.script({ kind: 'status', status: 503, headers: { 'X-Replayed': 'true' } });
    const error = await h.rt
      .run(h.client.send({ method: 'POST', url: '/acme', key: 'a1', json: {} }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'failed', reason: 'permanent' });
    expect((await h.client.get('a1'))?.attempts[0]?.error).toMatch(/X-Replayed: true/);

    const s = await harness({ policy: { profile: 'stripe' } }, { profile: 'stripe' });
    s.server.script({ kind: 'status', status: 500, headers: { ...replayed, 'Stripe-Should-Retry': 'true' } });
    await expect(s.rt.run(s.client.send({ method: 'POST', url: '/p', key: 's1', json: {} }))).rejects.toMatchObject({
      state: 'unknown',
    });
    expect(s.server.ledger.requestsFor('s1')).toHaveLength(1);
  });

  it('an error without the marker is still retried', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 503, headers: { 'Idempotent-Replayed': 'false' } });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'n1', json: {} }));
    expect(result.status).toBe(201);
    expect(h.server.ledger.requestsFor('n1')).toHaveLength(2);
  });
});
