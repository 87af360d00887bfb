/**
 * Options are checked with zod when the guard or a store is built: a bad
 * value fails at start-up with an InvalidOptionsError naming the field.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/index.js';
import { postgresIdempotencyStore } from '../../src/postgres.js';
import { type IdempotencyOptions, idempotency, memoryIdempotencyStore } from '../../src/server.js';

const base = (): IdempotencyOptions => ({
  store: memoryIdempotencyStore(),
  scopeOf: () => 'a',
  routes: { 'POST /payments': {} },
});

function refusal(build: () => unknown): InvalidOptionsError {
  try {
    build();
  } catch (error) {
    if (error instanceof InvalidOptionsError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('oncely/server options', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['scopeOf missing', { scopeOf: undefined }, 'idempotency.scopeOf'],
    ['store not a store', { store: {} }, 'idempotency.store'],
    [
      'a store without renew (no lease renewal)',
      { store: { claim: () => undefined, complete: () => undefined } },
      'idempotency.store',
    ],
    ['schedule not a function', { schedule: 1_000 }, 'idempotency.schedule'],
    ['nodeScopeOf not a function', { nodeScopeOf: 'user' }, 'idempotency.nodeScopeOf'],
    ['leaseMs zero', { leaseMs: 0 }, 'idempotency.leaseMs'],
    ['retentionMs a string', { retentionMs: '24h' }, 'idempotency.retentionMs'],
    ['replay unknown', { replay: 'always' }, 'idempotency.replay'],
    ['keyHeader with a space', { keyHeader: 'Idempotency Key' }, 'idempotency.keyHeader'],
    ['maxKeyLength zero', { maxKeyLength: 0 }, 'idempotency.maxKeyLength'],
    ['a per-route leaseMs', { routes: { 'POST /x': { leaseMs: -1 } } }, 'idempotency.routes["POST /x"].leaseMs'],
    ['a per-route typo', { routes: { 'POST /x': { retention: 1 } } }, 'idempotency.routes["POST /x"]'],
    ['a top-level typo', { retentionMS: 1 }, 'idempotency'],
    ['a pattern that cannot match', { routes: { 'ANY /x': {} } }, 'idempotency.routes["ANY /x"]'],
  ])('%s → InvalidOptionsError naming %s', (_, change, field) => {
    const error = refusal(() => idempotency({ ...base(), ...change } as IdempotencyOptions));
    expect(error.field).toBe(field);
    expect(error.message).toContain(field);
  });

  it('nodeScopeOf alone serves the middleware; wrap and withIdempotency name scopeOf as missing', async () => {
    const { scopeOf: _, ...rest } = base();
    const guard = idempotency({ ...rest, nodeScopeOf: () => 'a' });
    expect(typeof guard.middleware).toBe('function');
    expect(refusal(() => guard.wrap(async () => new Response())).field).toBe('idempotency.scopeOf');
    const error = await guard.withIdempotency(new Request('http://x/payments'), () => new Response()).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).field).toBe('idempotency.scopeOf');
  });

  it('the accepted defaults build a guard', () => {
    const guard = idempotency(base());
    expect(typeof guard.wrap).toBe('function');
    expect(typeof guard.middleware).toBe('function');
  });

  it('store options name their field too', () => {
    expect(refusal(() => memoryIdempotencyStore({ sweepIntervalMs: 0 })).field).toBe(
      'memoryIdempotencyStore.sweepIntervalMs',
    );
    expect(refusal(() => postgresIdempotencyStore({ pool: {} as pg.Pool })).field).toBe(
      'postgresIdempotencyStore.pool',
    );
    const pool = { connect: () => undefined, query: () => undefined } as unknown as pg.Pool;
    expect(refusal(() => postgresIdempotencyStore({ pool, table: 'Bad-Name' })).field).toBe(
      'postgresIdempotencyStore.table',
    );
  });
});
