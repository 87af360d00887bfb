/**
 * `onUnauthorized` runs in a later round (flow/drive/later-round.ts, loaded
 * with `import()`). After a 401, if that chunk cannot be loaded (a page that
 * could not fetch it), the hook is not called and the operation goes back
 * pending, unleased, its one-time refresh not spent, with its key: the next
 * pass resends with the same key, and a 401 again is refreshed once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/later-round.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'later-round.js', importOriginal),
);

afterEach(closeAll);

describe('onUnauthorized whose chunk could not load', () => {
  it('is not called; the operation waits, pending with its key and its refresh, for the next pass', async () => {
    let refreshes = 0;
    const h = await harness({
      onUnauthorized: () => {
        refreshes++;
      },
    });
    h.server.script({ kind: 'status', status: 401 });
    // Every load fails until the next pass: the background one after the 401, and the refresh's own.
    load.failuresLeft = 10;
    const failed = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'u1', json: {} })));
    expect(failed).toBeInstanceOf(OperationError);
    expect(failed).toMatchObject({ key: 'u1' });
    expect(loadError((failed as Error).cause)).toMatchObject({ message: expect.stringContaining('Failed to fetch') });
    expect(refreshes).toBe(0);
    const pending = await h.store.get('u1');
    expect(pending).toMatchObject({ state: 'pending', attempts: [{ n: 1, status: 401 }] });
    expect(pending?.lease).toBeUndefined();
    expect(pending?.authRefreshed).toBeUndefined();

    // The next pass resends with the same key; a second 401 finds the refresh unspent: refreshed once, resent.
    load.failuresLeft = 0;
    h.server.script({ kind: 'status', status: 401 });
    await h.rt.run(h.client.resume());
    expect(refreshes).toBe(1);
    expect(await h.store.get('u1')).toMatchObject({
      state: 'succeeded',
      attempts: [{ status: 401 }, { status: 401 }, { status: 201 }],
    });
    expect(h.server.ledger.requestsFor('u1')).toHaveLength(3);
  });
});
