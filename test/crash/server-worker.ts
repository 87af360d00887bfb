/**
 * The server of the server crash loop (server-crash.test.ts): a payment API
 * guarded by `oncely/server` on PostgreSQL, in a child process the test
 * SIGKILLs again and again. Configured by one JSON argument; prints `ready`
 * once it listens.
 *
 * Two routes, the two ways an app keeps its effect:
 * - `POST /tx/payments`: transactional (`withIdempotency`): the payment row
 *   and the stored answer commit together, so a kill leaves both or neither;
 * - `POST /plain/payments`: the effect commits on its own (as a call to a
 *   provider would), then the answer is stored: a kill between the two
 *   leaves an effect without an answer, which the guard must never run
 *   again blindly (`outcome-unknown`).
 * Each route's handler waits `handlerMs` before its effect, so kills land
 * before, during and after it.
 */
import { createServer } from 'node:http';
import pg from 'pg';
import { toRequest, writeResponse } from '../../examples/server/serve-fetch.js';
import { postgresIdempotencyStore } from '../../src/postgres.js';
import { idempotency } from '../../src/server.js';

export interface ServerWorkerConfig {
  databaseUrl: string;
  port: number;
  /** Lease of a claim: a killed server's claim is judged abandoned this long after it was taken. */
  leaseMs: number;
  handlerMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ServerWorkerConfig;
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 8 });
pool.on('error', () => undefined);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const guard = idempotency<pg.PoolClient>({
  store: postgresIdempotencyStore({ pool, table: 'crash_idempotency' }),
  scopeOf: (request) => request.headers.get('x-account') ?? 'anonymous',
  routes: {
    'POST /tx/payments': { leaseMs: config.leaseMs },
    'POST /plain/payments': { leaseMs: config.leaseMs },
  },
});

const transactional = (request: Request): Promise<Response> =>
  guard.withIdempotency(request, async (tx, req) => {
    const { op } = (await req.json()) as { op: string };
    await sleep(config.handlerMs);
    await tx.query('INSERT INTO crash_payments (route, op) VALUES ($1, $2)', ['tx', op]);
    return Response.json({ op }, { status: 201 });
  });

const plain = guard.wrap(async (req) => {
  const { op } = (await req.json()) as { op: string };
  await sleep(config.handlerMs);
  await pool.query('INSERT INTO crash_payments (route, op) VALUES ($1, $2)', ['plain', op]);
  return Response.json({ op }, { status: 201 });
});

await pool.query(
  'CREATE TABLE IF NOT EXISTS crash_payments (id serial PRIMARY KEY, route text NOT NULL, op text NOT NULL)',
);
const server = createServer((req, res) => {
  const handler = req.url?.startsWith('/tx/') ? transactional : plain;
  toRequest(req)
    .then(handler)
    .then((response) => writeResponse(res, response))
    .catch(() => req.socket.destroy());
});
server.listen(config.port, '127.0.0.1', () => process.stdout.write('ready\n'));
