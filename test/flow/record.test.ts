import { describe, expect, it } from 'vitest';
import { recordSchema } from '../../src/model/schema.js';
import { type OperationRecord, parseRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store/contract.js';

/** Shapes the engine writes: fresh, in flight, retried, succeeded, stopped, with every optional field. */
const samples: OperationRecord[] = [
  sampleRecord('fresh', { epoch: 1, lease: { owner: 'o1', until: 31_000 } }),
  sampleRecord('in-flight', {
    state: 'in_flight',
    lease: { owner: 'o1', until: 50_000 },
    attempts: [{ n: 1, owner: 'o1', startedAt: 1_000, sent: 'maybe' }],
  }),
  sampleRecord('succeeded', {
    state: 'succeeded',
    scope: 'cart-9',
    meta: { userId: 'u1', nested: { list: [1, 'two', null] } },
    authRefreshed: true,
    retainUntil: 2_000,
    request: { method: 'PUT', url: 'https://x.test/a', headers: {}, body: { encoding: 'base64', data: 'AAE=' } },
    attempts: [
      {
        n: 1,
        owner: 'o1',
        startedAt: 1_000,
        endedAt: 1_010,
        class: 'retryable',
        status: 503,
        error: 'status 503',
        sent: 'definitely',
        effect: 'none',
        hintMs: 1_000,
        delayMs: 1_200,
      },
      { n: 2, owner: 'o1', startedAt: 2_300, endedAt: 2_310, class: 'completed', status: 201, sent: 'definitely' },
    ],
    backoff: { retries: 1, lastDelayMs: 1_200 },
    result: {
      status: 201,
      headers: { 'content-type': 'text/plain' },
      body: { encoding: 'text', text: 'ok' },
      replayed: false,
      receivedAt: 2_310,
    },
  }),
  sampleRecord('stopped', {
    state: 'unknown',
    request: { method: 'DELETE', url: 'https://x.test/a', headers: { 'x-a': '1' } },
    seq: 1_000_000_007,
    // The trace context stored at the write-ahead (oncely/opentelemetry).
    trace: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 },
    failure: {
      reason: 'attempts',
      class: 'ambiguous',
      status: 504,
      message: 'gave up',
      remediation: 'look it up',
      mayHaveTakenEffect: true,
      response: {
        status: 504,
        headers: { 'content-type': 'application/problem+json' },
        body: { encoding: 'json', text: '{"title":"Gateway Timeout"}' },
        truncated: true,
      },
    },
    attemptsOmitted: { count: 40, counted: 2, mayHaveTakenEffect: true, byClass: { not_sent: 38, ambiguous: 2 } },
    result: { status: 200, headers: {}, replayed: true, receivedAt: 3 },
  }),
  sampleRecord('reconciled', {
    state: 'succeeded',
    reference: 'order-42',
    attempts: [
      {
        n: 1,
        owner: 'o1',
        startedAt: 1_000,
        endedAt: 1_500,
        class: 'retryable',
        status: 500,
        sent: 'definitely',
        effect: 'unknown',
        providerId: 'pi_1',
      },
    ],
    result: { status: 201, headers: {}, replayed: false, receivedAt: 9, reconciled: true },
    reconciliation: {
      count: 3,
      checks: 2,
      nextCheckAt: 70_000,
      history: [
        { at: 5, by: 'hook', verdict: 'unknown', error: 'reconcile threw: down' },
        { at: 9, by: 'settle', verdict: 'applied' },
      ],
    },
  }),
];

const wrongValues: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'a'.repeat(64),
  -1,
  0,
  1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 53,
  true,
  {},
  [],
  { encoding: 'json' },
  Object.create(null),
  new Map(),
];

/** Every path to a value inside `value` (objects and arrays), the root excluded. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  const out: (string | number)[][] = [];
  for (const [key, child] of Object.entries(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    out.push(path, ...paths(child, path));
  }
  return out;
}

/** A deep copy with the value at `path` replaced (or removed, for `undefined`). */
function withValue(record: OperationRecord, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(record) as unknown as Record<string | number, unknown>;
  let parent = copy;
  for (const segment of path.slice(0, -1)) parent = parent[segment] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** parseRecord must agree with the zod schema on `raw`, and return what zod would. */
function expectAgreement(raw: unknown, label: string): void {
  const parsed = parseRecord(raw);
  const reference = recordSchema.safeParse(raw);
  expect(parsed.ok, label).toBe(reference.success);
  if (parsed.ok && reference.success) {
    expect(parsed.record, label).toStrictEqual(reference.data);
  }
}

describe('parseRecord', () => {
  it('vouches for the shapes the engine writes without a copy (the fast path)', () => {
    for (const record of samples) {
      expect(recordSchema.safeParse(record).success).toBe(true);
      const parsed = parseRecord(record);
      expect(parsed.ok && parsed.record === record, record.key).toBe(true);
      // Stored text comes back through JSON.parse: also exact.
      const reread = JSON.parse(JSON.stringify(record)) as unknown;
      const again = parseRecord(reread);
      expect(again.ok && again.record === reread, record.key).toBe(true);
    }
  });

  it('agrees with the zod schema when any field holds a wrong value or is missing', () => {
    let variants = 0;
    for (const record of samples) {
      for (const path of paths(record)) {
        for (const [i, value] of wrongValues.entries()) {
          expectAgreement(withValue(record, path, value), `${record.key} ${path.join('.')} = wrongValues[${i}]`);
          variants++;
        }
      }
    }
    expect(variants).toBeGreaterThan(2_000);
  });

  it('never returns unknown keys: zod strips them, so the copy is zod’s', () => {
    for (const record of samples) {
      const objects = [[], ...paths(record)].filter((path) => {
        let value: unknown = record;
        for (const segment of path) value = (value as Record<string | number, unknown>)[segment];
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      });
      for (const path of objects) {
        const raw = structuredClone(record) as unknown as Record<string | number, unknown>;
        let target = raw;
        for (const segment of path) target = target[segment] as Record<string | number, unknown>;
        target.extra = 1;
        expectAgreement(raw, `${record.key} ${path.join('.')}.extra`);
      }
      // JSON.parse makes "__proto__" an own key; zod drops it.
      const text = JSON.stringify(record);
      expectAgreement(JSON.parse(text.replace('{', '{"__proto__":{"x":1},')), '__proto__');
      const protoHeader = text.replace(
        /"headers":\{(\}?)/,
        (_, empty) => `"headers":{"__proto__":"v"${empty ? '}' : ','}`,
      );
      expectAgreement(JSON.parse(protoHeader), 'headers.__proto__');
    }
  });

  it('rejects what is not a plain record', () => {
    for (const [i, raw] of [undefined, null, 'x', 1, [], [samples[0]], new Date()].entries()) {
      expectAgreement(raw, `non-record #${i}`);
    }
    const sparse = structuredClone(samples[2]) as OperationRecord;
    sparse.attempts.length = 3;
    expectAgreement(sparse, 'sparse attempts');
    const symbolic = structuredClone(samples[0]) as OperationRecord;
    (symbolic.request.headers as Record<string | symbol, string>)[Symbol('s')] = 'v';
    expectAgreement(symbolic, 'symbol header key');
  });
});

describe('parseRecord problems', () => {
  it('names each wrong field by its path and says what it accepts', () => {
    const record = structuredClone(samples[2]) as unknown as Record<string, unknown>;
    (record.attempts as Record<string, unknown>[])[1]!.sent = 'perhaps';
    record.fingerprint = 'XYZ';
    delete record.createdAt;
    (record.result as Record<string, unknown>).body = { encoding: 'gzip', data: '' };
    const parsed = parseRecord(record);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      'fingerprint: expected 64 lowercase hex digits (SHA-256)',
      'createdAt: expected an integer >= 0',
      'attempts.1.sent: expected one of "not", "maybe", "definitely"',
      'result.body.encoding: expected one of "json", "text", "base64"',
    ]);
  });

  it('says what the root should be when it is no record at all', () => {
    expect(parseRecord('text')).toEqual({ ok: false, problems: ['(root): expected an object'] });
    expect(parseRecord({ ...samples[0], v: 2 })).toEqual({ ok: false, problems: ['v: expected 1'] });
  });
});
