/**
 * The one migration runner shared by the fleet's operations table and the
 * server half's idempotency table: two tables migrated at once in one fresh
 * schema create it once, whichever kinds they are (each migrator locks the
 * schema before its table, so the second `CREATE SCHEMA IF NOT EXISTS` waits
 * and finds it instead of failing on pg_namespace's unique index).
 */
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_SCHEMA_VERSION, MIGRATIONS, postgresIdempotencyStore } from '../../src/postgres.js';
import { sampleRecord } from '../../src/store/contract.js';
import { postgresForSuite, suiteDatabase } from '../helpers/postgres.js';

const bin = postgresForSuite('PostgreSQL migrations');

describe.runIf(bin !== undefined)('migrations of both kinds of table on a real PostgreSQL', () => {
  const db = suiteDatabase(bin);

  const idempotencyStore = (schema: string, table: string) =>
    postgresIdempotencyStore({ pool: db.pool, schema, table });

  it('two idempotency tables migrated at once in one fresh schema: both migrate, once each', async () => {
    const a = idempotencyStore('fresh_idem', 'one');
    const b = idempotencyStore('fresh_idem', 'two');
    const applied = await Promise.all([a.migrate(), b.migrate()]);
    const versions = Array.from({ length: IDEMPOTENCY_SCHEMA_VERSION }, (_, i) => i + 1);
    expect(applied).toEqual([versions, versions]);
    expect(await Promise.all([a.migrate(), b.migrate()])).toEqual([[], []]);
  });

  it('an idempotency table and an operations table migrated at once in one fresh schema', async () => {
    const idem = idempotencyStore('fresh_mixed', 'idem');
    const ops = db.store({ schema: 'fresh_mixed', table: 'ops' });
    const [idemApplied, opsApplied] = await Promise.all([idem.migrate(), ops.migrate()]);
    expect(idemApplied).toHaveLength(IDEMPOTENCY_SCHEMA_VERSION);
    expect(opsApplied).toEqual(MIGRATIONS.map((m) => m.version));
    await ops.put(sampleRecord('x'));
    expect((await ops.get('x'))?.key).toBe('x');
  });

  it('an idempotency table migrated by a newer oncely is refused, naming the versions', async () => {
    const store = idempotencyStore('public', 'newer');
    await store.migrate();
    await db.pool.query(
      `INSERT INTO "public"."newer_migrations" (version, description) VALUES ($1, 'from the future')`,
      [IDEMPOTENCY_SCHEMA_VERSION + 1],
    );
    await expect(idempotencyStore('public', 'newer').migrate()).rejects.toThrow(
      `"public"."newer" is at schema version ${IDEMPOTENCY_SCHEMA_VERSION + 1}, newer than this oncely knows (${IDEMPOTENCY_SCHEMA_VERSION}): upgrade oncely`,
    );
  });
});
