/**
 * The two ends agree: oncely's client against `oncely/server`. The client
 * sends its key bare, the server accepts it; a lost response is replayed;
 * and the server's "outcome unknown" answer ends the operation `unknown` at
 * once under both built-in profiles (a profile rule), not after retrying a
 * "still in progress" until the deadline.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, memoryStore, OperationError } from '../../src/index.js';
import { memoryIdempotencyStore } from '../../src/server.js';
import { createFakeRuntime } from '../../src/testing.js';
import { type App, post, startApp } from './fixture.js';

describe('oncely client × oncely/server', () => {
  let app: App;
  beforeEach(async () => {
    const clock = { now: 1_000_000 };
    app = await startApp('fetch', {
      store: memoryIdempotencyStore({ now: () => clock.now }),
      advance: async (ms) => {
        clock.now += ms;
      },
    });
  });
  afterEach(() => app.close());

  const client = (profile: 'ietf' | 'stripe') => {
    const rt = createFakeRuntime({ seed: 1 });
    const c = createClient({
      baseUrl: app.url,
      runtime: rt,
      fetch: rt.fetch,
      store: memoryStore({ now: rt.now }),
      endpoints: { 'POST /payments': { profile } },
    });
    return { rt, c };
  };

  it.each(['ietf', 'stripe'] as const)(
    '%s profile: the bare key is accepted, a repeat send replays, one effect',
    async (profile) => {
      const { rt, c } = client(profile);
      const first = await rt.run(
        c.send({ method: 'POST', url: '/payments', key: `k-${profile}`, json: { amount: 1 } }),
      );
      expect(first.status).toBe(201);
      // Another client (another device) with the same key: the server replays.
      const other = client(profile);
      const again = await other.rt.run(
        other.c.send({ method: 'POST', url: '/payments', key: `k-${profile}`, json: { amount: 1 } }),
      );
      expect(again.replayed).toBe(true);
      expect(again.data).toEqual(first.data);
      expect(app.effects).toHaveLength(1);
      await c.close();
      await other.c.close();
    },
  );

  it.each(['ietf', 'stripe'] as const)(
    '%s profile: 409 outcome-unknown ends the operation unknown after one request (may have taken effect)',
    async (profile) => {
      const gate = app.hold();
      const crashed = post(app, '/payments', { key: 'lost', body: { amount: 100 } }).catch(() => undefined);
      await gate.arrived;
      await app.advance(10_000);
      const { rt, c } = client(profile);
      const error = await rt
        .run(c.send({ method: 'POST', url: '/payments', key: 'lost', json: { amount: 100 } }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OperationError);
      expect(error).toMatchObject({ state: 'unknown', reason: 'permanent', status: 409, mayHaveTakenEffect: true });
      expect((await c.get('lost'))?.attempts).toHaveLength(1);
      expect(app.effects).toHaveLength(1);
      gate.release();
      await crashed;
      await c.close();
    },
  );
});
