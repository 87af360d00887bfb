/**
 * What follows an attempt that did not simply succeed (its class, the
 * server's hint, retry or stop: flow/drive/next-step.ts) is loaded with
 * `import()` once an attempt has answered (flow/drive/drive.ts): never
 * before the first request leaves; in the background after a plain 2xx;
 * awaited by an attempt that needs it before then. A load that fails (a
 * chunk the page could not fetch) leaves the record as a crash mid-attempt
 * would, but released at once: pending, its attempt open, so the next owner
 * closes that attempt as `ambiguous` and goes on with the same key. The
 * caller hears that it may have taken effect, never that it was not done.
 * The host's full outage gate comes with it (policy/lazy-gate.ts): a
 * budgeted retry of an operation stored earlier loads it before admission,
 * and a load that fails there releases the operation untouched.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError, type Outcome } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, loadsAtFirstSend, rejection, retryAfter503 } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/next-step.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'next-step.js', importOriginal),
);

afterEach(closeAll);

describe('the next step after an attempt, loaded once an attempt has answered', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('is not loaded before the first request leaves; a failed load releases the record for a resume with the same key', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    const attemptsBefore = load.attempts;
    // The background load after this plain 201 fails, silently: the send is not concerned.
    load.failuresLeft = 1;
    expect(await loadsAtFirstSend(h.client, h.rt, load, 'ok-1')).toEqual([attemptsBefore]);
    expect(load.attempts).toBe(attemptsBefore + 1);

    // An operation stored by an earlier page, its last attempt answered 503: its retry needs the full gate.
    const now = h.rt.now();
    await h.store.put(retryAfter503('r1', `${h.server.url}/payments`, now));
    load.failuresLeft = 1;
    const outcomes: Outcome[] = [];
    const summary = await h.rt.run(h.client.resume({ onOutcome: (o) => void outcomes.push(o) }));
    expect(summary).toMatchObject({ driven: 1, unfinished: 1, succeeded: 0 });
    // Its 503 said "not applied": interrupted, not "may have taken effect", and it stays stored for the next pass.
    expect(outcomes).toMatchObject([{ key: 'r1', ok: false, state: 'pending' }]);
    expect(outcomes[0]?.error).toBeInstanceOf(OperationError);
    expect(outcomes[0]?.error).toMatchObject({ key: 'r1', mayHaveTakenEffect: false });
    expect(loadError(outcomes[0]?.error?.cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 2);
    // Nothing sent, nothing held: pending, no lease, its one attempt as it was.
    const untouched = await h.store.get('r1');
    expect(untouched).toMatchObject({ state: 'pending', attempts: [{ n: 1, class: 'retryable' }] });
    expect(untouched?.attempts).toHaveLength(1);
    expect(untouched?.lease).toBeUndefined();
    expect(h.server.ledger.requests.map((r) => r.key)).toEqual(['ok-1']);

    // A 503 needs the next step; its load fails once.
    h.server.script({ kind: 'status', status: 503 });
    load.failuresLeft = 1;
    const failed = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} })));
    expect(load.attempts).toBe(attemptsBefore + 3);
    expect(failed).toBeInstanceOf(OperationError);
    expect(failed).toMatchObject({ key: 'p1', mayHaveTakenEffect: true });
    expect((failed as Error).message).toContain('may have taken effect');
    expect(loadError((failed as Error).cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    // Released at once, its attempt left open: no lease to wait out, nothing settled.
    const stored = await h.store.get('p1');
    expect(stored).toMatchObject({ state: 'pending', attempts: [{ n: 1 }] });
    expect(stored?.lease).toBeUndefined();
    expect(stored?.attempts[0]?.endedAt).toBeUndefined();

    // The next pass finishes both with their keys: it loads the module for r1's admission.
    await h.rt.run(h.client.resume());
    expect(load.attempts).toBe(attemptsBefore + 4);
    const done = await h.store.get('p1');
    expect(done).toMatchObject({ state: 'succeeded', attempts: [{ n: 1, class: 'ambiguous' }, { n: 2 }] });
    expect(await h.store.get('r1')).toMatchObject({ state: 'succeeded', attempts: [{ n: 1 }, { n: 2, status: 201 }] });
    expect(h.server.ledger.requestsFor('p1')).toHaveLength(2);
    expect(h.server.ledger.requestsFor('r1')).toHaveLength(1);

    // Loaded now: a 503 is retried as always, without another load.
    h.server.script({ kind: 'status', status: 503 });
    const retried = await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p2', json: {} }));
    expect(retried).toMatchObject({ key: 'p2', status: 201, attempts: 2 });
    expect(load.attempts).toBe(attemptsBefore + 4);
    expect(await h.store.get('p2')).toMatchObject({ attempts: [{ class: 'retryable', status: 503 }, { n: 2 }] });
  });
});
