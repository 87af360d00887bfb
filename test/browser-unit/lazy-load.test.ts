/**
 * The browser client loads its drain loop with `import()` (off a page's
 * start-up path). A chunk that cannot be fetched (a page that went offline
 * before it arrived) must fail a call before anything is written ahead:
 * never after, when the caller would see an error for an operation the
 * drainer still sends later under its key.
 */
import { describe, expect, it, vi } from 'vitest';
import { createBrowserClient, memoryStore } from '../../src/browser.js';
import { createFakeRuntime } from '../../src/testing.js';
import { fakeOrigin } from './fakes.js';

vi.mock('../../src/browser/drain-loop.js', () => {
  throw new Error('chunk not fetched');
});

describe('a drain loop that cannot be loaded', () => {
  it('fails send, enqueue and retry before the write-ahead; nothing is stored, nothing sent', async () => {
    const rt = createFakeRuntime({ seed: 5 });
    const store = memoryStore({ now: rt.now });
    const sent: string[] = [];
    const fetch: typeof globalThis.fetch = async (input) => {
      sent.push(String(input));
      return new Response('{}', { status: 201 });
    };
    const client = createBrowserClient({
      baseUrl: 'https://api.example.com',
      store,
      runtime: rt,
      fetch,
      env: fakeOrigin(rt.track).tab({}).env,
    });
    await rt.run(client.ready);
    // (vitest wraps the factory's error: what matters is that each call rejects, and when.)
    await expect(rt.run(client.send({ method: 'POST', url: '/payments', json: { amount: 1 } }))).rejects.toThrow();
    await expect(rt.run(client.enqueue({ method: 'POST', url: '/payments', json: { amount: 2 } }))).rejects.toThrow();
    await expect(rt.run(client.retry('some-key'))).rejects.toThrow();
    expect(await store.list()).toEqual([]);
    expect(sent).toEqual([]);
    await rt.run(client.close());
  });
});
