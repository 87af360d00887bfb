/**
 * The conformance kit of `oncely/testing` against `oncely/server` (memory
 * store, both styles: every rule passes) and against the bundled reference
 * server (the rules it does not keep are named, so a change either way shows).
 * PostgreSQL runs it in postgres.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryIdempotencyStore } from '../../src/server.js';
import { CONFORMANCE_RULES, type ReferenceServer, serverConformance, startReferenceServer } from '../../src/testing.js';
import { type App, type Style, startApp } from './fixture.js';

describe.each<Style>(['fetch', 'connect'])('serverConformance × oncely/server (%s, memory store)', (style) => {
  let app: App;
  afterEach(() => app.close());

  it('passes every rule, none skipped', async () => {
    const clock = { now: 1_000_000 };
    app = await startApp(style, {
      store: memoryIdempotencyStore({ now: () => clock.now }),
      advance: async (ms) => {
        clock.now += ms;
      },
    });
    const report = await serverConformance({
      url: `${app.url}/payments`,
      headers: { 'X-Account': 'alice' },
      otherCaller: { 'X-Account': 'bob' },
      advanceTime: app.advance,
      retentionMs: 86_400_000,
      stall: { body: { stall: true }, leaseMs: 10_000 },
      effects: async () => app.effects.length,
    });
    expect(report.checks.map((c) => [c.rule, c.status, c.detail]).filter(([, s]) => s !== 'pass')).toEqual([]);
    expect(report.checks.map((c) => c.rule)).toEqual(CONFORMANCE_RULES);
    expect(report.passed).toBe(true);
  });
});

describe('serverConformance × the reference server', () => {
  let server: ReferenceServer;
  afterEach(() => server.close());

  it('names the rules the reference server does not keep', async () => {
    const clock = { now: 1_000_000 };
    server = await startReferenceServer({
      now: () => clock.now,
      handle: async (req) => {
        if ((req.body as { stall?: boolean }).stall === true) await new Promise<never>(() => undefined);
        return {
          status: 201,
          body: { id: `res_${req.effectNumber}` },
          headers: { Location: `/r/${req.effectNumber}` },
        };
      },
    });
    const report = await serverConformance({
      url: `${server.url}/payments`,
      headers: { Authorization: 'Bearer alice' },
      otherCaller: { Authorization: 'Bearer bob' },
      advanceTime: async (ms) => {
        clock.now += ms;
      },
      retentionMs: 86_400_000,
      stall: { body: { stall: true }, leaseMs: 60_000 },
      effects: async () => server.ledger.totalEffects(),
    });
    const verdicts = Object.fromEntries(report.checks.map((c) => [c.rule, c.status]));
    expect(verdicts).toEqual({
      'key-missing': 'pass',
      // No key length limit.
      'key-invalid': 'fail',
      'key-forms': 'pass',
      replay: 'pass',
      'fingerprint-canonical': 'pass',
      'fingerprint-mismatch': 'pass',
      // One key table for every caller.
      scope: 'fail',
      // Its 409 "in progress" has no Retry-After.
      'atomic-claim': 'fail',
      // No lease: a claim that never finishes answers "in progress" forever.
      'outcome-unknown': 'fail',
      retention: 'pass',
    });
    expect(report.failed).toEqual(['key-invalid', 'scope', 'atomic-claim', 'outcome-unknown']);
  });
});
