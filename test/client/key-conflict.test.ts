/**
 * "Key reused with a different payload": the provider refused this request
 * because it holds another one under the key (another device or process
 * used it). That other request may have done what this one asks, so the
 * operation ends `unknown`, may-have-taken-effect, and nothing invites a
 * new key: a payment app would charge twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStore, OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('a key the provider holds for another request', () => {
  it('ends unknown, flagged as maybe applied, with a remediation that never says to send it as a new operation', async () => {
    const h = await harness();
    // Device A pays under order-123.
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'order-123', json: { amount: 4800 } }));
    // Device B, with its own store, sends order-123 with another payload.
    const deviceB = h.another({ store: memoryStore({ now: h.rt.now }) });
    const error = await h.rt
      .run(deviceB.send({ method: 'POST', url: '/payments', key: 'order-123', json: { amount: 4800, note: 'tip' } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    expect(error).toMatchObject({ key: 'order-123', state: 'unknown', reason: 'permanent', mayHaveTakenEffect: true });
    expect((error as OperationError).remediation).not.toMatch(/new operation/i);
    expect((error as OperationError).remediation).toMatch(/provider by its key/);
    expect(h.server.ledger.effectCount('order-123')).toBe(1);
    // Forgetting it takes a deliberate force.
    await expect(deviceB.discard('order-123')).rejects.toThrow(/may have taken effect/);
  });
});
