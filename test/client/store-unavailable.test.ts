/**
 * A store that fails before anything is sent (a full disk under the
 * write-ahead, a store closed under the client) is reported as an oncely
 * error with a code and the key, saying nothing was sent: the caller tries
 * again under the same key, never a new one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, isOncelyError, type OncelyError } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';
import { fileStore } from '../helpers/machine.js';

afterEach(closeAll);
afterEach(removeTempDirs);

function expectNothingSent(error: unknown, key: string | undefined): void {
  expect(isOncelyError(error)).toBe(true);
  expect(error).toMatchObject({ code: 'store_unavailable', key });
  expect((error as OncelyError).message).toMatch(/nothing was sent/i);
  expect((error as OncelyError).remediation).toMatch(/same key/);
}

describe('a full disk under the write-ahead', () => {
  const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

  it.each(['enqueue', 'send'] as const)('%s rejects with the key, and nothing was sent', async (call) => {
    const h = await harness();
    const client = h.another({ store: forwardingStore(h.store, { update: () => Promise.reject(full()) }) });
    const error = await client[call]({ method: 'POST', url: '/payments', key: `full-${call}`, json: {} }).catch(
      (e: unknown) => e,
    );
    expectNothingSent(error, `full-${call}`);
    expect((error as Error).message).toContain('ENOSPC');
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});

it('after the store was closed: send, enqueue, get and resume reject the same way', async () => {
  const rt = createFakeRuntime({ seed: 1 });
  const server = await startReferenceServer({ runtime: rt });
  const store = fileStore({ dir: tempDir() });
  const client = createClient({ baseUrl: server.url, runtime: rt, fetch: rt.fetch, store });
  try {
    await store.close();
    const request = { method: 'POST', url: '/payments', json: {} };
    expectNothingSent(await client.send({ ...request, key: 's' }).catch((e: unknown) => e), 's');
    expectNothingSent(await client.enqueue({ ...request, key: 'e' }).catch((e: unknown) => e), 'e');
    expectNothingSent(await client.get('g').catch((e: unknown) => e), 'g');
    expectNothingSent(await client.resume().catch((e: unknown) => e), undefined);
    expect(server.ledger.requests).toHaveLength(0);
  } finally {
    await client.close();
    await server.close();
  }
});

it("resume passes the caller's own onOutcome error on untouched", async () => {
  const h = await harness();
  const now = h.rt.now();
  const request = { ...sampleRecord('o').request, url: `${h.server.url}/payments` };
  await h.store.put(sampleRecord('o', { request, createdAt: now, nextAttemptAt: now, deadlineAt: now + 60_000 }));
  const mine = new Error('mine');
  const rejected = await h.rt.run(h.client.resume({ onOutcome: () => Promise.reject(mine) })).catch((e: unknown) => e);
  expect(rejected).toBe(mine);
});
