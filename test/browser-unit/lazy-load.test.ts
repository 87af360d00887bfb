/**
 * The browser client loads its drain loop with `import()` (off a page's
 * start-up path). A chunk that cannot be fetched (a page that went offline
 * before it arrived) must fail a call before anything is written ahead:
 * never after, when the caller would see an error for an operation the
 * drainer still sends later under its key. Once the chunk does arrive, the
 * loop starts as start-up would have started it.
 */
import { describe, expect, it, vi } from 'vitest';
import { createBrowserClient, memoryStore } from '../../src/browser.js';
import { createFakeRuntime } from '../../src/testing.js';
import { fakeOrigin } from './fakes.js';

const chunk = vi.hoisted(() => ({ available: false }));

vi.mock('../../src/browser/drain-loop.js', async (importOriginal) => {
  if (!chunk.available) throw new Error('chunk not fetched');
  return importOriginal();
});

function setUp() {
  const rt = createFakeRuntime({ seed: 5 });
  const store = memoryStore({ now: rt.now });
  const sent: string[] = [];
  const fetch: typeof globalThis.fetch = async (input) => {
    sent.push(input instanceof Request ? input.url : String(input));
    return new Response('{}', { status: 201, headers: { 'content-type': 'application/json' } });
  };
  const client = createBrowserClient({
    baseUrl: 'https://api.example.com',
    store,
    runtime: rt,
    fetch,
    env: fakeOrigin(rt.track).tab({}).env,
    drainIntervalMs: 1_000,
  });
  return { rt, store, sent, client };
}

describe('a drain loop whose chunk cannot be loaded', () => {
  it('fails send, enqueue and retry before the write-ahead; later calls load it again, and the loop starts', async () => {
    const { rt, store, sent, client } = setUp();
    await rt.run(client.ready);
    // (vitest wraps the factory's error: what matters is that each call rejects, and when.)
    await expect(rt.run(client.send({ method: 'POST', url: '/payments', json: { amount: 1 } }))).rejects.toThrow();
    await expect(rt.run(client.enqueue({ method: 'POST', url: '/payments', json: { amount: 2 } }))).rejects.toThrow();
    await expect(rt.run(client.retry('some-key'))).rejects.toThrow();
    expect(await store.list()).toEqual([]);
    expect(sent).toEqual([]);

    // The chunk can be fetched again: the next call loads it and sends once.
    chunk.available = true;
    const result = await rt.run(client.send({ method: 'POST', url: '/payments', json: { amount: 3 } }));
    expect(result.status).toBe(201);
    expect(sent).toHaveLength(1);

    // And start-up's part is done late: the drain loop runs its periodic passes.
    const passes: number[] = [];
    client.on('drain:pass', (e) => passes.push(e.due));
    await rt.advance(1_500);
    expect(passes.length).toBeGreaterThan(0);
    await rt.run(client.close());
  });
});
