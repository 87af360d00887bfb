/**
 * The loop's later rounds (flow/drive/later-round.ts: the wait for a
 * retry's time, the `headers` and `onUnauthorized` hooks) load with
 * `import()` (flow/drive/later-round-load.ts): never before a plain first
 * send; in the background after an answer; at once by a client with a
 * `headers` callback. A load that fails (a chunk the page could not fetch)
 * leaves the operation pending, unleased, with no attempt opened and the
 * same key; the next pass loads again and finishes it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, loadsAtFirstSend, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'later-round.js', importOriginal),
);

afterEach(closeAll);

describe("the loop's later rounds, loaded on need", () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('are not loaded before a first send; a failed load leaves the operation pending for the next pass', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    const attemptsBefore = load.attempts;
    // The background load after this 201 fails, silently: the send is not concerned.
    load.failuresLeft = 1;
    expect(await loadsAtFirstSend(h.client, h.rt, load, 'ok-1')).toEqual([attemptsBefore]);
    expect(load.attempts).toBe(attemptsBefore + 1);

    // A 503: the retry waits for its time, and that wait is a later round's. Its loads fail (the background one
    // after the 503's answer, and the one the wait makes): the operation goes back pending, its 503 recorded.
    h.server.script({ kind: 'status', status: 503 });
    load.failuresLeft = 2;
    const failed = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} })));
    expect(failed).toBeInstanceOf(OperationError);
    // The 503 said "not applied", and no other attempt was opened: not "may have taken effect".
    expect(failed).toMatchObject({ key: 'p1', mayHaveTakenEffect: false });
    expect(loadError((failed as Error).cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 3);
    const pending = await h.store.get('p1');
    expect(pending).toMatchObject({ state: 'pending', attempts: [{ n: 1, class: 'retryable', status: 503 }] });
    expect(pending?.attempts).toHaveLength(1);
    expect(pending?.lease).toBeUndefined();
    expect(h.server.ledger.requestsFor('p1')).toHaveLength(1);

    // The next pass finishes it with its key.
    await h.rt.advance(2_000);
    await h.rt.run(h.client.resume());
    expect(await h.store.get('p1')).toMatchObject({ state: 'succeeded', attempts: [{ n: 1 }, { n: 2, status: 201 }] });
    expect(h.server.ledger.requestsFor('p1')).toHaveLength(2);

    // A client with a `headers` callback loads it as it is created, and sends with it.
    const asked: number[] = [];
    const withHeaders = h.another({
      headers: (ctx) => {
        asked.push(ctx.attempt);
        return { authorization: 'Bearer t' };
      },
    });
    const signed = await h.rt.run(withHeaders.send({ method: 'POST', url: '/payments', key: 'h1', json: {} }));
    expect(signed).toMatchObject({ key: 'h1', status: 201 });
    expect(asked).toEqual([1]);
    expect(h.server.ledger.requestsFor('h1')).toHaveLength(1);
    expect(load.attempts).toBe(attemptsBefore + 4);
  });
});
