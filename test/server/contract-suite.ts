/**
 * The server contract (docs/server.md), one test per row, on a real socket,
 * in both styles (Fetch handler and Connect middleware), run against each
 * store (contract.test.ts: memory; postgres.test.ts: PostgreSQL). Time moves
 * by `app.advance`: the memory store's injected clock, or on PostgreSQL the
 * rows' lease and retention ends moved back (the database's `now()` judges them).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../src/server.js';
import { type App, post, type Style } from './fixture.js';

export function contractSuite(store: string, start: (style: Style) => Promise<App>): void {
  describe.each<Style>(['fetch', 'connect'])(`server contract (%s, ${store})`, (style) => {
    let app: App;
    beforeEach(async () => {
      app = await start(style);
    });
    afterEach(() => app.close());

    it('key-missing: a guarded route without a key → 400 problem+json, no effect', async () => {
      const answer = await post(app, '/payments');
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(answer.json.type).toBe(PROBLEM_TYPES.keyMissing);
      expect(app.effects).toHaveLength(0);
    });

    it('key-optional: a route with requireKey false runs a keyless request unguarded; other routes pass through', async () => {
      expect((await post(app, '/optional')).status).toBe(201);
      expect((await post(app, '/optional')).status).toBe(201);
      expect((await post(app, '/unguarded')).status).toBe(201);
      expect(app.effects).toHaveLength(3);
    });

    it('key-invalid: over the length limit, a broken sf-string or a list → 400 problem+json, no effect', async () => {
      for (const key of ['k'.repeat(256), '"unterminated', '"a", "b"', 'a b', '""', '"é"']) {
        const answer = await post(app, '/payments', { key });
        expect(answer.status, key).toBe(400);
        expect(answer.json.type, key).toBe(PROBLEM_TYPES.keyInvalid);
      }
      expect((await post(app, '/payments', { key: 'k'.repeat(255) })).status).toBe(201);
      expect(app.effects).toHaveLength(1);
    });

    it('key-forms: the sf-string "abc" and the bare abc (what oncely and Stripe clients send) are one key', async () => {
      const first = await post(app, '/payments', { key: '"key-1"' });
      const second = await post(app, '/payments', { key: 'key-1' });
      const escaped = await post(app, '/payments', { key: '"a\\"b"' });
      expect(first.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.text).toBe(first.text);
      expect(escaped.status).toBe(201);
      expect(app.effects).toHaveLength(2);
    });

    it('fingerprint-canonical: the same JSON with another key order and whitespace is a replay, not a 422', async () => {
      await post(app, '/payments', { key: 'k', body: '{"amount":100,"currency":"eur"}' });
      const again = await post(app, '/payments', { key: 'k', body: '{ "currency" : "eur",\n "amount": 100 }' });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(app.effects).toHaveLength(1);
    });

    it('fingerprint-mismatch: the key with another body, target or raw bytes → 422 problem+json, no effect', async () => {
      await post(app, '/payments', { key: 'k', body: { amount: 100 } });
      const otherBody = await post(app, '/payments', { key: 'k', body: { amount: 999 } });
      expect(otherBody.status).toBe(422);
      expect(otherBody.headers.get('content-type')).toBe('application/problem+json');
      expect(otherBody.json.type).toBe(PROBLEM_TYPES.keyReused);
      expect((await post(app, '/payments?currency=usd', { key: 'k', body: { amount: 100 } })).status).toBe(422);
      await post(app, '/payments', { key: 'raw', body: 'amount=1&b=2', contentType: 'text/plain' });
      expect(
        (await post(app, '/payments', { key: 'raw', body: 'b=2&amount=1', contentType: 'text/plain' })).status,
      ).toBe(422);
      expect(app.effects).toHaveLength(2);
    });

    it('scope: a second caller with the same key runs its own operation and never sees the first one’s answer', async () => {
      const alice = await post(app, '/payments', { key: 'shared', account: 'alice' });
      const bob = await post(app, '/payments', { key: 'shared', account: 'bob', body: { amount: 5 } });
      expect(bob.status).toBe(201);
      expect(bob.headers.get('idempotent-replayed')).toBeNull();
      expect(bob.json.id).not.toBe(alice.json.id);
      // The route is part of the scope too: the key on another route is another operation.
      expect((await post(app, '/deterministic', { key: 'shared', account: 'alice' })).status).toBe(201);
      expect(app.effects.map((e) => e.account)).toEqual(['alice', 'bob', 'alice']);
    });

    it('atomic-claim: 20 concurrent duplicates → one effect; the others 409 problem+json with Retry-After', async () => {
      const gate = app.hold();
      const first = post(app, '/payments', { key: 'race' });
      await gate.arrived;
      const duplicates = await Promise.all(Array.from({ length: 20 }, () => post(app, '/payments', { key: 'race' })));
      gate.release();
      expect((await first).status).toBe(201);
      for (const d of duplicates) {
        expect(d.status).toBe(409);
        expect(d.json.type).toBe(PROBLEM_TYPES.inProgress);
        expect(d.headers.get('retry-after')).toBe('1');
        expect(d.headers.get('access-control-expose-headers')).toContain('Retry-After');
      }
      expect(app.effects).toHaveLength(1);
    });

    it('atomic-claim: 20 duplicates fired at once (no hold) → still one effect', async () => {
      const answers = await Promise.all(Array.from({ length: 20 }, () => post(app, '/payments', { key: 'burst' })));
      expect(app.effects).toHaveLength(1);
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s !== 201 && s !== 409)).toEqual([]);
      expect(answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    });

    it('replay: status, Content-Type, Location and body bytes; Idempotent-Replayed exposed; no other header', async () => {
      const first = await post(app, '/payments', { key: 'k' });
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(first.headers.get('x-internal')).toBe('secret-1');
      const replay = await post(app, '/payments', { key: 'k' });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers.get('content-type')).toBe('application/json');
      expect(replay.headers.get('location')).toBe('/payments/pay_1');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.headers.get('access-control-expose-headers')).toContain('Idempotent-Replayed');
      expect(replay.headers.get('x-internal')).toBeNull();
      expect(replay.headers.get('set-cookie')).toBeNull();
      expect(app.effects).toHaveLength(1);
    });

    it('replay-policy stripe (the default): a 5xx is stored and replayed; the key never runs twice', async () => {
      const first = await post(app, '/payments', { key: 'k', body: { respond: 500 } });
      const again = await post(app, '/payments', { key: 'k', body: { respond: 500 } });
      expect([first.status, again.status]).toEqual([500, 500]);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(app.effects).toHaveLength(1);
    });

    it('replay-policy deterministic: 2xx and 4xx replayed; a 5xx releases the key so a retry runs again', async () => {
      await post(app, '/deterministic', { key: 'k5', body: { respond: 503 } });
      const retried = await post(app, '/deterministic', { key: 'k5', body: { respond: 503 } });
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      await post(app, '/deterministic', { key: 'k4', body: { respond: 402 } });
      const replayed = await post(app, '/deterministic', { key: 'k4', body: { respond: 402 } });
      expect(replayed.status).toBe(402);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(app.effects).toHaveLength(3);
    });

    it('replay-policy success-only: only 2xx replayed; a 4xx releases the key', async () => {
      await post(app, '/success-only', { key: 'k', body: { respond: 409 } });
      const again = await post(app, '/success-only', { key: 'k', body: { respond: 409 } });
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(app.effects).toHaveLength(2);
    });

    it('crash: a claim whose lease ran out without an outcome answers 409 outcome-unknown (no Retry-After), hook once', async () => {
      const gate = app.hold();
      const lost = post(app, '/payments', { key: 'crash' }).catch(() => undefined);
      await gate.arrived;
      await app.advance(10_000); // the lease (10 s here) is over, the handler still stuck: as after a crash
      const first = await post(app, '/payments', { key: 'crash' });
      const second = await post(app, '/payments', { key: 'crash' });
      for (const answer of [first, second]) {
        expect(answer.status).toBe(409);
        expect(answer.json.type).toBe(PROBLEM_TYPES.outcomeUnknown);
        expect(answer.headers.get('retry-after')).toBeNull();
      }
      expect(app.abandoned).toEqual([
        { key: 'crash', route: 'POST /payments', caller: 'anonymous', method: 'POST', target: '/payments' },
      ]);
      expect(app.effects).toHaveLength(1);
      gate.release();
      await lost;
    });

    it('crash: a handler that throws after its effect → 500, then its key answers outcome-unknown', async () => {
      const failed = await post(app, '/payments', { key: 't', body: { throw: true } });
      expect(failed.status).toBe(500);
      const retry = await post(app, '/payments', { key: 't', body: { throw: true } });
      if (style === 'fetch') {
        // A throw is not a response: never stored, the claim ends without an outcome.
        expect(retry.status).toBe(409);
        expect(retry.json.type).toBe(PROBLEM_TYPES.outcomeUnknown);
      } else {
        // Connect: the error goes to the framework's error handler, whose 500 is the response (stored under `stripe`).
        expect(retry.status).toBe(500);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
      }
      expect(app.effects).toHaveLength(1);
    });

    it("crash: rerun 'safe' runs an abandoned claim again under a new epoch; the stale run cannot store over it", async () => {
      const gate = app.hold();
      const stale = post(app, '/safe', { key: 'r' });
      await gate.arrived;
      await app.advance(10_000);
      const rerun = await post(app, '/safe', { key: 'r' });
      expect(rerun.status).toBe(201);
      expect(rerun.json.id).toBe('pay_2');
      gate.release();
      expect((await stale).json.id).toBe('pay_1'); // its caller gets its own answer…
      const replay = await post(app, '/safe', { key: 'r' });
      expect(replay.json.id).toBe('pay_2'); // …but the record keeps the newer epoch's
      expect(app.abandoned).toEqual([]);
    });

    it('retention: a key reused after retention is a new operation; sweep deletes expired records', async () => {
      await post(app, '/short', { key: 'old' });
      await app.advance(500);
      expect((await post(app, '/short', { key: 'old' })).headers.get('idempotent-replayed')).toBe('true');
      await app.advance(500);
      const after = await post(app, '/short', { key: 'old', body: { amount: 7 } });
      expect(after.status).toBe(201);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
      expect(app.effects).toHaveLength(2);
      await app.advance(1_000);
      expect(await app.sweep()).toBe(1);
    });
  });
}
