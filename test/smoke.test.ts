import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.js';
import { createFakeRuntime, type ReferenceServer, startReferenceServer } from '../src/testing.js';

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('smoke', () => {
  it('sends once and survives a lost response', async () => {
    const rt = createFakeRuntime();
    server = await startReferenceServer({ now: rt.now });
    const client = createClient({ baseUrl: server.url, runtime: rt, fetch: rt.fetch });
    server.script({ kind: 'reset-after-commit' });
    const result = await rt.run(client.send({ method: 'POST', url: '/payments', json: { amount: 4800 } }));
    expect(result.status).toBe(201);
    expect(result.attempts).toBe(2);
    expect(server.ledger.effectCount(result.key)).toBe(1);
    expect(result.replayed).toBe(true);
  });
});
