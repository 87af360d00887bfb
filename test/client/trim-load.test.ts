/**
 * A history of `MAX_KEPT_ATTEMPTS` attempts is trimmed as the next attempt
 * starts (flow/decide/trim-attempts.ts), which travels in the later rounds'
 * chunk: the loop loads it before that start. An operation stored by an
 * earlier page, its own and idle here, driven while that chunk cannot load
 * (a page that could not fetch it) opens no attempt and sends nothing: it
 * goes back pending with its key and unleased, and the next pass sends it
 * with the same key, its history trimmed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_KEPT_ATTEMPTS } from '../../src/flow/decide/attempt-history.js';
import { OperationError } from '../../src/index.js';
import type { AttemptRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'later-round.js', importOriginal),
);

afterEach(closeAll);

describe('the trimming of a full history, loaded on need', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('a failed load opens no attempt and leaves the operation pending; the next pass sends it trimmed', async () => {
    const h = await harness({ owner: 'this-page' }, { handle: () => ({ status: 201, body: { ok: true } }) });
    const now = h.rt.now();
    // Each an unsent attempt (the network was down): nothing of them counts toward maxAttempts.
    const unsent = (n: number): AttemptRecord => ({
      n,
      owner: 'this-page',
      startedAt: now - 1_000 + n,
      endedAt: now - 1_000 + n,
      class: 'not_sent',
      sent: 'not',
      effect: 'none',
    });
    await h.store.put(
      sampleRecord('long', {
        request: { method: 'POST', url: `${h.server.url}/payments`, headers: {} },
        createdAt: now - 1_000,
        deadlineAt: now + 60_000,
        nextAttemptAt: now,
        lease: { owner: 'this-page', until: now + 30_000 },
        attempts: Array.from({ length: MAX_KEPT_ATTEMPTS }, (_, i) => unsent(i + 1)),
      }),
    );
    const attemptsBefore = load.attempts;
    load.failuresLeft = 1;
    const errors: unknown[] = [];
    await h.rt.run(h.client.resume({ onOutcome: (o) => void errors.push(o.error) }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(OperationError);
    expect(errors[0]).toMatchObject({ key: 'long', mayHaveTakenEffect: false });
    expect(loadError((errors[0] as Error).cause)).toMatchObject({
      message: expect.stringContaining('Failed to fetch'),
    });
    expect(load.attempts).toBe(attemptsBefore + 1);
    const pending = await h.store.get('long');
    expect(pending).toMatchObject({ state: 'pending' });
    expect(pending?.attempts).toHaveLength(MAX_KEPT_ATTEMPTS);
    expect(pending?.lease).toBeUndefined();
    expect(h.server.ledger.requestsFor('long')).toEqual([]);

    // The next pass loads it and sends attempt 33 with the same key, the history trimmed.
    await h.rt.run(h.client.resume());
    const done = await h.store.get('long');
    expect(done).toMatchObject({ state: 'succeeded', attemptsOmitted: { count: 1, counted: 0 } });
    expect(done?.attempts).toHaveLength(MAX_KEPT_ATTEMPTS);
    expect(done?.attempts.at(-1)).toMatchObject({ n: MAX_KEPT_ATTEMPTS + 1, status: 201 });
    expect(h.server.ledger.requestsFor('long')).toHaveLength(1);
  });
});
