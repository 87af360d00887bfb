/**
 * The check of a 2xx body against the caller's `responseSchema`
 * (flow/calls/schema-check.ts) is loaded with `import()` only for a request
 * that has a schema: started when it is admitted, awaited once its answer is
 * in. If it cannot be loaded (a chunk the page could not fetch), the
 * operation has still completed: the caller gets the `ResponseValidationError`
 * a schema that threw gives (state `succeeded`, the raw result, the load's
 * error as `cause`), nothing is sent again, and a later send of the key
 * checks the stored answer once the module loads.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { ResponseValidationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/schema-check.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'schema-check.js', importOriginal),
);

afterEach(closeAll);

describe('the response schema check, loaded for a request that has a schema', () => {
  it('is not loaded by a send without one; a failed load is a completed operation, checked again on the next send', async () => {
    const h = await harness();
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'plain', json: {} }));
    expect(load.attempts).toBe(0);

    // Every load fails while this send runs: the one started at admission and the one awaited after the 2xx.
    load.failuresLeft = 10;
    const schema = z.object({ ok: z.literal(true) });
    const send = () => h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {}, responseSchema: schema });
    const offline = await rejection(h.rt.run(send()));
    expect(load.attempts).toBeGreaterThanOrEqual(1);
    expect(offline).toBeInstanceOf(ResponseValidationError);
    expect(offline).toMatchObject({ code: 'response_invalid', key: 'p1', state: 'succeeded', status: 201 });
    expect((offline as ResponseValidationError).issues[0]).toMatch(/^the response schema could not be run: /);
    expect(loadError((offline as Error).cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(await h.client.get('p1')).toMatchObject({ state: 'succeeded' });

    // Back online: the stored answer is checked now, from the store, without a second request.
    load.failuresLeft = 0;
    const again = await rejection(h.rt.run(send()));
    expect(again).toBeInstanceOf(ResponseValidationError);
    expect((again as ResponseValidationError).issues.join()).toMatch(/^data\.ok: /);
    expect(h.server.ledger.requests).toHaveLength(2);
  });
});
