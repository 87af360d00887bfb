/**
 * The claim of a stored operation (flow/drive/claim-round.ts) and the full
 * look before an attempt (flow/drive/before-attempt.ts: a stop at the
 * deadline, the retry delay, the host gate's admission) are in the later
 * rounds' chunk; a first send drives the record it wrote ahead, which needs
 * no claim, and a plain round is looked at without the full look
 * (first-look.ts). A stored operation driven while that chunk cannot load (a
 * page that could not fetch it) is not claimed: it stays stored and pending
 * with its key, unleased, no attempt opened, and the caller hears it typed;
 * the next pass loads it, claims it and goes on.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'later-round.js', importOriginal),
);

afterEach(closeAll);

describe('the claim of a stored operation and the full look, loaded on need', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('a failed load leaves the operation unclaimed and pending; the next pass claims it and stops it', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: { ok: true } }) });
    const now = h.rt.now();
    // Stored by an earlier page, never sent, and its deadline has passed: claimed, only the full look stops it.
    await h.store.put(
      sampleRecord('late', {
        request: { method: 'POST', url: `${h.server.url}/payments`, headers: {} },
        createdAt: now - 120_000,
        deadlineAt: now - 1,
        nextAttemptAt: now - 60_000,
      }),
    );
    const stored = await h.store.get('late');
    const attemptsBefore = load.attempts;
    load.failuresLeft = 1;
    const errors: unknown[] = [];
    await h.rt.run(h.client.resume({ onOutcome: (o) => void errors.push(o.error) }));
    const [failed] = errors;
    expect(errors).toHaveLength(1);
    expect(failed).toBeInstanceOf(OperationError);
    expect(failed).toMatchObject({ key: 'late', mayHaveTakenEffect: false });
    expect(loadError((failed as Error).cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 1);
    const pending = await h.store.get('late');
    // Not even claimed: the very record as stored (no epoch bumped, no lease taken).
    expect(pending).toBe(stored);
    expect(pending).toMatchObject({ state: 'pending', attempts: [] });
    expect(pending?.lease).toBeUndefined();
    expect(h.server.ledger.requestsFor('late')).toEqual([]);

    // The next pass loads it, claims it: the deadline stops the operation, nothing was sent.
    await h.rt.run(h.client.resume());
    expect(load.attempts).toBe(attemptsBefore + 2);
    expect(await h.store.get('late')).toMatchObject({ state: 'failed', failure: { reason: 'deadline' } });
    expect(h.server.ledger.requestsFor('late')).toEqual([]);
  });
});
