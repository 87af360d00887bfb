/**
 * What every PostgreSQL fleet suite of the crash tier sets up around its
 * tests: a throwaway cluster, a reference server for the API and the worker
 * build, started once for the suite and closed after it, whatever the tests
 * did. Call it at the top of a `describe`; it registers the hooks itself.
 */
import { afterAll, beforeAll } from 'vitest';
import { type ReferenceServer, type ReferenceServerOptions, startReferenceServer } from '../../src/testing.js';
import { disposePgWorkerBuild, pgWorkerCommand, startTestDatabase, type TestDatabase } from './postgres.js';

export interface PgFleetSuite {
  /** The suite's database; throws if it did not start. */
  db(): TestDatabase;
  /** The suite's reference server; throws if it did not start. */
  server(): ReferenceServer;
}

/** `bin` from `postgresForSuite`: undefined when the suite is skipped, and nothing starts. */
export function usePgFleetSuite(bin: string | undefined, serverOptions?: ReferenceServerOptions): PgFleetSuite {
  let db: TestDatabase | undefined;
  let server: ReferenceServer | undefined;
  beforeAll(async () => {
    if (bin === undefined) return;
    db = await startTestDatabase(bin);
    server = await startReferenceServer(serverOptions);
    await pgWorkerCommand();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.close();
    disposePgWorkerBuild();
  });
  return {
    db() {
      if (db === undefined) throw new Error('the test database did not start');
      return db;
    },
    server() {
      if (server === undefined) throw new Error('the reference server did not start');
      return server;
    },
  };
}
