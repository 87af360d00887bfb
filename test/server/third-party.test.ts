/**
 * The conformance kit against the Node libraries a team would reach for,
 * each guarding the same Express payment route, and against oncely/server's
 * middleware in the same run. Each library's verdicts are asserted rule by
 * rule, with the reason, so the test fails when a rule unexpectedly passes
 * or fails (a new version of a library changes the table in docs/server.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CONFORMANCE_RULES, type ConformanceReport, serverConformance } from '../../src/testing.js';
import {
  expressIdempotencyApp,
  LEASE_MS,
  type LibraryApp,
  nodeIdempotencyApp,
  oncelyApp,
  RETENTION_MS,
} from './third-party-apps.js';

let app: LibraryApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function conformance(started: LibraryApp, maxKeyLength?: number): Promise<ConformanceReport> {
  app = started;
  return serverConformance({
    ...(maxKeyLength === undefined ? {} : { maxKeyLength }),
    url: started.url,
    headers: { 'X-Account': 'alice' },
    otherCaller: { 'X-Account': 'bob' },
    advanceTime: started.advance,
    retentionMs: RETENTION_MS,
    stall: { body: { stall: true }, leaseMs: LEASE_MS },
    effects: async () => started.effects(),
  });
}

/** Each rule's verdict, and the part of its detail that says why. */
type Expected = Record<string, ['pass' | 'fail', RegExp]>;

function expectVerdicts(report: ConformanceReport, expected: Expected): void {
  expect(report.checks.map((c) => c.rule)).toEqual(CONFORMANCE_RULES);
  for (const check of report.checks) {
    const [status, why] = expected[check.rule] ?? ['missing', /^$/];
    expect({ rule: check.rule, status: check.status }).toEqual({ rule: check.rule, status });
    expect(check.detail, check.rule).toMatch(why);
  }
}

/** @node-idempotency/core, either in-progress strategy: the same verdicts. */
const NODE_IDEMPOTENCY: Expected = {
  // 400, but a plain JSON error, not problem+json.
  'key-missing': ['fail', /status 400, application\/json;.*expected 400 problem\+json/],
  // A length limit (256), but no syntax: a broken sf-string is a key like any other.
  'key-invalid': ['fail', /an unterminated sf-string: status 201/],
  // `"abc"` and `abc` are two different keys.
  'key-forms': ['fail', /the bare form: status 201.*expected a replay/],
  // Only the body and what the adapter keeps (here, as its interceptor, Content-Type): Location is lost.
  replay: ['fail', /location null, first \/payments\/pay_\d+/],
  // It hashes JSON.stringify of the parsed body: another key order is "another request" (422).
  'fingerprint-canonical': ['fail', /status 422.*expected the replay of status 201/],
  // 422, but not problem+json.
  'fingerprint-mismatch': ['fail', /status 422, application\/json;.*expected 422 problem\+json/],
  // Keyed by method, path and key only: the second caller is replayed the first one's payment.
  scope: ['fail', /the second caller got the first caller's answer.*Idempotent-Replayed: true/],
  // One effect (its storage's set-if-absent is atomic), but the 409 has no Retry-After.
  'atomic-claim': ['fail', /status 409.*expected a Retry-After/],
  // No lease: a claim whose process died is "in progress" until its 24 h TTL.
  'outcome-unknown': ['fail', /after the lease: status 409.*still "in progress"/],
  retention: ['pass', /a new operation: status 201/],
};

describe('serverConformance × third-party libraries (Express, one payment route)', () => {
  it('oncely/server: every rule passes, none skipped', async () => {
    const report = await conformance(await oncelyApp());
    expect(report.checks.filter((c) => c.status !== 'pass').map((c) => [c.rule, c.detail])).toEqual([]);
    expect(report.checks.map((c) => c.rule)).toEqual(CONFORMANCE_RULES);
  });

  it('express-idempotency 1.0.6: the rules it breaks, and why', async () => {
    const report = await conformance(await expressIdempotencyApp());
    expectVerdicts(report, {
      // No key: the route runs unguarded (there is no "required" mode).
      'key-missing': ['fail', /status 201.*expected 400 problem\+json/],
      // No length limit and no syntax: any header value is a key.
      'key-invalid': ['fail', /a 256-character key: status 201/],
      // `"abc"` and `abc` are two different keys.
      'key-forms': ['fail', /the bare form: status 201.*expected a replay/],
      // Only Content-Type is kept: Location is lost (and no Idempotent-Replayed).
      replay: ['fail', /location null, first \/payments\/pay_\d+/],
      // Its intent check compares the parsed bodies deeply, so it does replay; but the replay
      // carries no Idempotent-Replayed, so no client (nor the kit) can tell it from a second run.
      'fingerprint-canonical': ['fail', /status 201.*expected the replay of status 201/],
      // Another body → 417 Expectation Failed, an HTML error page.
      'fingerprint-mismatch': ['fail', /status 417, text\/html.*expected 422 problem\+json/],
      // One key table for every caller: the second caller gets the first one's payment.
      scope: ['fail', /the second caller got the first caller's answer/],
      // Its replays carry no Idempotent-Replayed, so 10 duplicates fired at once are 10 answers
      // no client can tell from fresh ones (the kit stops there: whether they ran is not asked).
      'atomic-claim': ['fail', /10 fresh answers to 10 duplicates/],
      // No lease: a claim whose process died answers 409 "in progress" for ever.
      'outcome-unknown': ['fail', /after the lease: status 409.*still "in progress"/],
      // Its memory adapter never expires a key: after retention, another body is still "a misuse" (417).
      retention: ['fail', /status 417.*expected a fresh answer/],
    });
  });

  it('@node-idempotency/core 1.0.11: the rules it breaks, and why', async () => {
    expectVerdicts(await conformance(await nodeIdempotencyApp(false), 256), NODE_IDEMPOTENCY);
  });

  it('@node-idempotency/core 1.0.11 in its wait mode (a duplicate polls until the first ends, 200 ms at most)', async () => {
    expectVerdicts(await conformance(await nodeIdempotencyApp(true), 256), NODE_IDEMPOTENCY);
  });
});
