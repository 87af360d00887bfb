/**
 * `sweep()` judges a record it read, then deletes it: a `retry(key)` landing
 * in between reopens the operation and sends it, so an unconditional delete
 * would drop a record whose request is on the wire. The delete is
 * conditional on the record as stored (DESIGN.md principle 14).
 */
import { afterEach, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

it('a retry landing between the sweep read and its delete is not deleted', async () => {
  const h = await harness({ policy: { retainMs: 1_000, maxAttempts: 1 } });
  h.server.script({ kind: 'status', status: 500 });
  await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'r1', json: {} })).catch(() => undefined);
  expect((await h.client.get('r1'))?.state).toBe('unknown');
  await h.rt.advance(1_001);

  let retried: Promise<unknown> | undefined;
  // A slow store: the delete arrives only after another client's retry reopened the record.
  const slow = forwardingStore(h.store, {
    delete: async (key, options) => {
      retried = h.client.retry(key);
      // Yields to the event loop, not just to microtasks: retry() first loads its module with import().
      while ((await h.store.get(key))?.state === 'unknown') await new Promise((resolve) => setImmediate(resolve));
      return h.store.delete(key, options);
    },
  });
  const sweeper = createClient({ baseUrl: h.server.url, runtime: h.rt, fetch: h.rt.fetch, store: slow });
  expect(await sweeper.sweep()).toBe(0);
  await h.rt.run(retried as Promise<unknown>);
  expect((await h.client.get('r1'))?.state).toBe('succeeded');
  expect(h.server.ledger.requests).toHaveLength(2);
  await sweeper.close();
});
