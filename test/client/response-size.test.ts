/**
 * `maxResponseBytes`: the body is read incrementally and no further than the
 * cap. A 2xx over it still succeeded (the effect happened), but its body is
 * not kept: a prefix must never be replayed as the answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, InvalidOptionsError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

const big = (n: number) => ({ status: 201, body: { blob: 'x'.repeat(n) } });

describe('response bodies are capped', () => {
  it('a 2xx over maxResponseBytes: succeeded, one request, no stored body, the detail says why', async () => {
    const h = await harness({ policy: { maxResponseBytes: 1_024 } }, { handle: () => big(200_000) });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'big', json: {} }));
    expect(result).toMatchObject({ status: 201, data: undefined, attempts: 1 });
    const record = await h.client.get('big');
    expect(record?.state).toBe('succeeded');
    expect(record?.result?.body).toBeUndefined();
    expect(record?.result?.headers['content-type']).toBe('application/json');
    expect(h.server.ledger.requestsFor('big')).toHaveLength(1);
    const ended = h.events.find((e) => e.name === 'attempt:ended')?.payload as { detail: string };
    expect(ended.detail).toMatch(/maxResponseBytes \(1024\)/);
  });

  it('a body within the cap is kept whole; the default cap is 1 MiB', async () => {
    const h = await harness(
      { endpoints: { 'POST /small': { maxResponseBytes: 4_096 } } },
      { handle: () => big(3_000) },
    );
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/small', json: {} }));
    expect((result.data as { blob: string }).blob).toHaveLength(3_000);
    expect(h.client.policyFor('POST', '/small').maxResponseBytes).toBe(4_096);
    expect(h.client.policyFor('POST', '/other').maxResponseBytes).toBe(1_048_576);
  });

  it('an error body over the cap is still classified (from its first bytes) and retried', async () => {
    const h = await harness({ policy: { maxResponseBytes: 64 } });
    h.server.script({ kind: 'status', status: 503, body: { detail: 'y'.repeat(10_000) } });
    const result = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'e', json: {} }));
    expect(result.status).toBe(201);
    expect(h.server.ledger.requestsFor('e')).toHaveLength(2);
  });

  it.each([0, -1, 1.5, '1024', 2 ** 31])('maxResponseBytes %s is refused at construction', (value) => {
    expect(() => createClient({ policy: { maxResponseBytes: value as number } })).toThrow(InvalidOptionsError);
    expect(() => createClient({ policy: { maxResponseBytes: value as number } })).toThrow(/maxResponseBytes/);
  });
});
