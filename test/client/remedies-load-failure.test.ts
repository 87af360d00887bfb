/**
 * `retry` and `discard` are loaded with `import()` on the first of them
 * (flow/calls/remediation.ts). A load that fails (a chunk the page could not
 * fetch) rejects that call with the load's error and leaves the record as it
 * was: nothing reopened, nothing sent, nothing deleted. The next call loads
 * again and acts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sampleRecord } from '../../src/store.js';
import { closeAll, type Harness, harness } from '../helpers/harness.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/calls/remedies.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'remedies.js', importOriginal),
);

afterEach(closeAll);

/** A `blocked` operation (the server refused it), stored as a retry would find it. */
async function blocked(h: Harness, key: string): Promise<void> {
  const now = h.rt.now();
  await h.store.put(
    sampleRecord(key, {
      state: 'blocked',
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
}

describe('retry() and discard() when their module fails to load', () => {
  // One test: once the module has loaded, the test runner keeps it for the whole file.
  it('each rejects with the load error and changes nothing; the next calls load it again and act', async () => {
    const h = await harness({}, { handle: () => ({ status: 201, body: {} }) });
    await blocked(h, 'to-retry');
    await blocked(h, 'to-discard');
    load.failuresLeft = 2;
    const attemptsBefore = load.attempts;

    const retryFailed = await rejection(h.rt.run(h.client.retry('to-retry')));
    expect(loadError(retryFailed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    const discardFailed = await rejection(h.rt.run(h.client.discard('to-discard')));
    expect(loadError(discardFailed)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(load.attempts).toBe(attemptsBefore + 2);
    // Nothing reopened, sent or deleted.
    expect(await h.store.get('to-retry')).toMatchObject({ state: 'blocked', attempts: [] });
    expect(await h.store.get('to-discard')).toMatchObject({ state: 'blocked' });
    expect(h.server.ledger.requests).toHaveLength(0);

    const outcome = await h.rt.run(h.client.retry('to-retry'));
    expect(outcome).toMatchObject({ key: 'to-retry', ok: true, state: 'succeeded' });
    expect(h.server.ledger.requests.map((r) => r.key)).toEqual(['to-retry']);
    await h.rt.run(h.client.discard('to-discard'));
    expect(await h.store.get('to-discard')).toBeUndefined();
    expect(load.attempts).toBe(attemptsBefore + 3);
  });
});
