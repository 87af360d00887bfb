/**
 * The verification checklists of the domain notes, end to end against the
 * reference server: one effect per logical operation, whatever happens.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KeyConflictError, OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('seed checklists', () => {
  it('identical request twice → one effect, both callers get the same result', async () => {
    const { rt, server, client } = await harness();
    const first = await rt.run(
      client.send({ method: 'POST', url: '/payments', key: 'ord_4819', json: { amount: 4800 } }),
    );
    const second = await rt.run(
      client.send({ method: 'POST', url: '/payments', key: 'ord_4819', json: { amount: 4800 } }),
    );
    expect(server.ledger.effectCount('ord_4819')).toBe(1);
    expect(second.data).toEqual(first.data);
    expect(second.fromStore).toBe(true);
    expect(server.ledger.requests).toHaveLength(1); // the repeat never touched the network
  });

  it('identical request twice from two devices (no shared store) → one effect, the same result', async () => {
    const h = await harness();
    const other = h.another({ store: (await import('../../src/index.js')).memoryStore() });
    const a = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'k1', json: { amount: 1 } }));
    const b = await h.rt.run(other.send({ method: 'POST', url: '/payments', key: 'k1', json: { amount: 1 } }));
    expect(h.server.ledger.effectCount('k1')).toBe(1);
    expect(b.data).toEqual(a.data);
    expect(b.replayed).toBe(true);
  });

  it('two identical requests released concurrently → exactly one owns the work', async () => {
    const h = await harness();
    const { memoryStore } = await import('../../src/index.js');
    const other = h.another({ store: memoryStore() });
    h.server.script({ kind: 'delay', ms: 50 });
    const [a, b] = await h.rt.run(
      Promise.all([
        h.client.send({ method: 'POST', url: '/payments', key: 'k2', json: { amount: 2 } }),
        other.send({ method: 'POST', url: '/payments', key: 'k2', json: { amount: 2 } }),
      ]),
    );
    expect(h.server.ledger.effectCount('k2')).toBe(1);
    expect(a.data).toEqual(b.data);
    // The loser saw "in progress" (409) and came back for the replay.
    expect(h.server.ledger.requestsFor('k2').map((r) => r.outcome)).toContain('in_progress');
  });

  it('the same key in one client joins the running operation instead of sending twice', async () => {
    const { rt, server, client } = await harness();
    const [a, b] = await rt.run(
      Promise.all([
        client.send({ method: 'POST', url: '/payments', key: 'k3', json: { amount: 3 } }),
        client.send({ method: 'POST', url: '/payments', key: 'k3', json: { amount: 3 } }),
      ]),
    );
    expect(a.data).toEqual(b.data);
    expect(server.ledger.requestsFor('k3')).toHaveLength(1);
  });

  it('the key reused with a changed payload is refused locally, before any network', async () => {
    const { rt, server, client } = await harness();
    await rt.run(
      client.send({ method: 'POST', url: '/payments', key: 'k4', json: { orderId: 'ord_4819', amount: 4800 } }),
    );
    const error = await rt
      .run(client.send({ method: 'POST', url: '/payments', key: 'k4', json: { orderId: 'ord_4819', amount: 5800 } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyConflictError);
    expect(error).toMatchObject({ code: 'key_conflict', key: 'k4', state: 'succeeded' });
    expect(server.ledger.requests).toHaveLength(1);
  });

  it('the server refuses a reused key with another payload (another device) → unknown (the key did something), no second effect', async () => {
    const h = await harness();
    const { memoryStore } = await import('../../src/index.js');
    const other = h.another({ store: memoryStore() });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'k5', json: { amount: 4800 } }));
    const error = await h.rt
      .run(other.send({ method: 'POST', url: '/payments', key: 'k5', json: { amount: 5800 } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    // This request was refused, but the provider holds another one under the key that may have done what this one
    // asks: never `failed` ("send it as a new operation"), which would invite a second payment.
    expect(error).toMatchObject({ state: 'unknown', reason: 'permanent', status: 422, mayHaveTakenEffect: true });
    expect(h.server.ledger.effectCount('k5')).toBe(1);
  });

  it('reordered JSON keys → the same fingerprint: a repeat is the same operation', async () => {
    const { rt, server, client } = await harness();
    const a = await rt.run(
      client.send({ method: 'POST', url: '/payments', key: 'k6', json: { orderId: 'o', amount: 1, currency: 'EUR' } }),
    );
    const b = await rt.run(
      client.send({ method: 'POST', url: '/payments', key: 'k6', json: { currency: 'EUR', amount: 1, orderId: 'o' } }),
    );
    expect(b.fromStore).toBe(true);
    expect(b.data).toEqual(a.data);
    expect((await client.get('k6'))?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(server.ledger.effectCount('k6')).toBe(1);
  });

  it('response lost after commit → the retry gets the stored result, one effect', async () => {
    const { rt, server, client } = await harness({ policy: { attemptTimeoutMs: 2_000 } });
    server.script({ kind: 'drop-after-commit' });
    const result = await rt.run(client.send({ method: 'POST', url: '/payments', json: { amount: 7 } }));
    expect(result.status).toBe(201);
    expect(result.replayed).toBe(true);
    expect(result.attempts).toBe(2);
    expect(server.ledger.effectCount(result.key)).toBe(1);
    const record = await client.get(result.key);
    expect(record?.attempts[0]).toMatchObject({ class: 'ambiguous', sent: 'maybe', effect: 'unknown' });
  });

  it('expiry: past the key retention a retry is refused and a legitimate new operation gets a new key', async () => {
    const { rt, server, client } = await harness(
      { policy: { keyRetentionMs: 60_000, maxAttempts: 1 } },
      { keyRetentionMs: 60_000 },
    );
    server.script({ kind: 'status', status: 502 });
    const first = await rt.run(client.enqueue({ method: 'POST', url: '/payments', json: { amount: 9 } }));
    const outcome = await rt.run(first.settled);
    expect(outcome.state).toBe('unknown');
    await rt.advance(61_000);
    await expect(client.retry(first.key)).rejects.toThrow(/forgotten/);
    const again = await rt.run(client.send({ method: 'POST', url: '/payments', json: { amount: 9 } }));
    expect(again.key).not.toBe(first.key);
    expect(server.ledger.effectCount(again.key)).toBe(1);
  });
});
