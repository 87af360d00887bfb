/**
 * A stop and its remediation texts (flow/decide/stop.ts) travel only in the
 * chunks that stop an operation (the next step's, the later rounds', and
 * clear()'s in the browser): a first send that simply succeeds leaves before
 * anything loads them. When they cannot load (a chunk the page could not
 * fetch), nothing is stopped: the operation stays stored, pending,
 * unleased, with its key, and the caller hears whether it may have taken
 * effect.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError, type Outcome } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, loadsAtFirstSend, rejection, retryAfter503 } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/decide/stop.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'stop.js', importOriginal),
);

afterEach(closeAll);

describe('the stop and its texts, loaded only where an operation stops', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('are not loaded before a first send; a failed load stops nothing and leaves the operation pending', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    // Every load fails until told otherwise: the background loads after this 201 too, silently.
    load.failuresLeft = Number.POSITIVE_INFINITY;
    expect(await loadsAtFirstSend(h.client, h.rt, load, 'ok-1')).toEqual([0]);

    // Stored by an earlier page, its deadline passed before its next attempt: a stop before any attempt here.
    const now = h.rt.now();
    await h.store.put({ ...retryAfter503('late', `${h.server.url}/payments`, now), deadlineAt: now - 1 });
    const outcomes: Outcome[] = [];
    await h.rt.run(h.client.resume({ onOutcome: (o) => void outcomes.push(o) }));
    expect(outcomes).toMatchObject([{ key: 'late', ok: false, state: 'pending' }]);
    expect(outcomes[0]?.error).toBeInstanceOf(OperationError);
    // Its 503 said "not applied": not "may have taken effect".
    expect(outcomes[0]?.error).toMatchObject({ key: 'late', mayHaveTakenEffect: false });
    const late = await h.store.get('late');
    expect(late).toMatchObject({ state: 'pending', attempts: [{ n: 1, class: 'retryable' }] });
    expect(late?.lease).toBeUndefined();

    // A 400 answer needs a stop: not stopped, released with its attempt open, and the caller told it may have
    // taken effect (the answer is not recorded), never that it was not done.
    h.server.script({ kind: 'status', status: 400 });
    const failed = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'bad', json: {} })));
    expect(failed).toBeInstanceOf(OperationError);
    expect(failed).toMatchObject({ key: 'bad', mayHaveTakenEffect: true });
    expect(loadError((failed as Error).cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    const bad = await h.store.get('bad');
    expect(bad).toMatchObject({ state: 'pending', attempts: [{ n: 1 }] });
    expect(bad?.lease).toBeUndefined();
    expect(bad?.attempts[0]?.endedAt).toBeUndefined();
    // Tried, and failed: nothing stopped, nothing sent twice.
    expect(load.attempts).toBeGreaterThan(0);
    expect(h.server.ledger.requestsFor('late')).toHaveLength(0);
    expect(h.server.ledger.requestsFor('bad')).toHaveLength(1);
    // (The runner keeps a failed mocked module failed for the whole file, so the next pass's successful load is
    // not shown here: a failed load of the chunks that import this module is retried by the next caller, as
    // next-step-load-failure.test.ts and later-round-load.test.ts show.)
  });
});
