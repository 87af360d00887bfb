/**
 * The resume pass (with the call around it, resume-call.ts) is loaded with `import()` on the first `resume()`
 * (flow/calls/assembly.ts). A load that fails (a chunk the page could not
 * fetch) rejects that `resume()` with the load's error; the operations it
 * would have driven stay stored, untouched, and the next `resume()` loads
 * the pass again and drives them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/resume-call.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'resume-call.js', importOriginal),
);

afterEach(closeAll);

describe('resume() when its pass fails to load', () => {
  it('rejects with the load error, leaves the stored operation as it was, and drives it on the next resume()', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: {} }) });
    const now = h.rt.now();
    await h.store.put(
      sampleRecord('stored-1', {
        request: {
          method: 'POST',
          url: `${h.server.url}/payments`,
          headers: { 'content-type': 'application/json' },
          body: { encoding: 'json', text: '{"amount":1}' },
        },
        createdAt: now,
        deadlineAt: now + 60_000,
        nextAttemptAt: now,
      }),
    );
    load.failuresLeft = 1;
    const attemptsBefore = load.attempts;

    const failed = await rejection(h.rt.run(h.client.resume()));
    // What matters: resume() rejected with the load's error, not resolved as if nothing were stored.
    expect(loadError(failed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    const untouched = await h.store.get('stored-1');
    expect(untouched).toMatchObject({ key: 'stored-1', state: 'pending', attempts: [] });
    expect(h.server.ledger.requests).toHaveLength(0);

    const summary = await h.rt.run(h.client.resume());
    expect(load.attempts).toBe(attemptsBefore + 2);
    expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
    expect(await h.store.get('stored-1')).toMatchObject({ key: 'stored-1', state: 'succeeded' });
    expect(h.server.ledger.requests.map((r) => r.key)).toEqual(['stored-1']);
    expect(h.server.ledger.effectCount('stored-1')).toBe(1);
  });
});
