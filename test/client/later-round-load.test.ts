/**
 * The loop's later rounds (flow/drive/later-round.ts: what stands before an
 * attempt that the write giving the loop its operation did not start, and
 * the `headers` and `onUnauthorized` hooks) load with `import()`
 * (flow/drive/later-round-load.ts): never before a first send that starts
 * its attempt with its write-ahead; in the background after an answer; at
 * once by a client with a `headers` callback. A load that fails (a chunk
 * the page could not fetch) leaves the operation as it was: pending, no
 * lease, no attempt opened, nothing sent, the same key; the next call loads
 * again and finishes it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError, type Outcome } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, retryAfter503 } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'later-round.js', importOriginal),
);

afterEach(closeAll);

describe("the loop's later rounds, loaded on need", () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('are not loaded before a first send; a failed load leaves a stored operation untouched for the next pass', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    const attemptsBefore = load.attempts;
    const loadsWhenSending: number[] = [];
    h.client.on('attempt:sending', () => void loadsWhenSending.push(load.attempts));
    // The background load after this 201 fails, silently: the send is not concerned.
    load.failuresLeft = 1;
    const sent = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'ok-1', json: {} }));
    expect(sent).toMatchObject({ key: 'ok-1', status: 201 });
    expect(loadsWhenSending).toEqual([attemptsBefore]);
    expect(load.attempts).toBe(attemptsBefore + 1);

    // Stored by an earlier page, its last attempt answered 503: its retry is a later round (the gate's admission).
    const now = h.rt.now();
    await h.store.put(retryAfter503('r1', `${h.server.url}/payments`, now));
    load.failuresLeft = 1;
    const outcomes: Outcome[] = [];
    const summary = await h.rt.run(h.client.resume({ onOutcome: (o) => void outcomes.push(o) }));
    expect(summary).toMatchObject({ driven: 1, unfinished: 1, succeeded: 0 });
    expect(outcomes).toMatchObject([{ key: 'r1', ok: false, state: 'pending' }]);
    expect(outcomes[0]?.error).toBeInstanceOf(OperationError);
    // Its 503 said "not applied", and no attempt was opened: not "may have taken effect".
    expect(outcomes[0]?.error).toMatchObject({ key: 'r1', mayHaveTakenEffect: false });
    expect(loadError(outcomes[0]?.error?.cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 2);
    const untouched = await h.store.get('r1');
    expect(untouched).toMatchObject({ state: 'pending', attempts: [{ n: 1, class: 'retryable' }] });
    expect(untouched?.attempts).toHaveLength(1);
    expect(untouched?.lease).toBeUndefined();
    expect(h.server.ledger.requests.map((r) => r.key)).toEqual(['ok-1']);

    // The next pass loads it and finishes the operation with its key.
    await h.rt.run(h.client.resume());
    expect(load.attempts).toBe(attemptsBefore + 3);
    expect(await h.store.get('r1')).toMatchObject({ state: 'succeeded', attempts: [{ n: 1 }, { n: 2, status: 201 }] });
    expect(h.server.ledger.requestsFor('r1')).toHaveLength(1);

    // Loaded now: a client with a `headers` callback sends with it, without another load.
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
    expect(load.attempts).toBe(attemptsBefore + 3);
  });
});
