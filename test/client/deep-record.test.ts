/**
 * A stored record nested deeply enough to overflow the stack (written by
 * another version, or by hand) is quarantined like any record that fails
 * its check, and `resume()` drives the rest: any failure to parse or check
 * a stored record is a verdict, never a throw (DESIGN.md principle 6).
 */
import * as fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { createClient, type OperationStore } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime, startReferenceServer } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { closeAll, harness } from '../helpers/harness.js';
import { fileStore } from '../helpers/machine.js';

afterEach(closeAll);
afterEach(removeTempDirs);

/** Record text whose `meta` nests 100,000 arrays deep. */
function deepText(key: string): string {
  const depth = 100_000;
  const text = JSON.stringify(sampleRecord(key, { meta: { x: 1 } }));
  return text.replace('{"x":1}', `{"x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
}

async function seed(store: OperationStore, url: string, now: number): Promise<void> {
  const times = { createdAt: now, nextAttemptAt: now, deadlineAt: now + 60_000 };
  const request = { ...sampleRecord('ok').request, url: `${url}/payments` };
  await store.put(sampleRecord('ok', { request, ...times }));
  await store.put(sampleRecord('deep', { request, ...times }));
}

it('memory store: the deep record is quarantined, the other one is driven', async () => {
  const h = await harness();
  await seed(h.store, h.server.url, h.rt.now());
  h.store.corrupt('deep', deepText('deep'));
  const summary = await h.rt.run(h.client.resume());
  expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
  expect((await h.client.quarantined()).map((q) => [q.id, q.problems.join()])).toEqual([
    ['deep', 'nested deeper than 64'],
  ]);
});

it('file store: the deep record is quarantined, the other one is driven', async () => {
  const rt = createFakeRuntime({ seed: 1 });
  const server = await startReferenceServer({ runtime: rt });
  const store = fileStore({ dir: tempDir() });
  const client = createClient({ baseUrl: server.url, runtime: rt, fetch: rt.fetch, store });
  try {
    await seed(store, server.url, rt.now());
    fs.writeFileSync(store.pathOf('deep'), `${deepText('deep')}\n`);
    const summary = await rt.run(client.resume());
    expect(summary).toMatchObject({ driven: 1, succeeded: 1 });
    expect((await client.quarantined()).map((q) => q.id)).toEqual(['deep']);
    expect(server.ledger.requests).toHaveLength(1);
  } finally {
    await client.close();
    await store.close();
    await server.close();
  }
});
