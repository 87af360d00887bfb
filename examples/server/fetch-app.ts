/**
 * A Fetch-style app (the shape of a Hono, Next.js, Bun or Deno handler):
 * `(Request) => Promise<Response>`, served here by Node's `http` through a
 * small adapter. Its payment route runs in transactional mode on
 * PostgreSQL: the payment row and the stored response commit together, or
 * neither does.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postgresIdempotencyStore } from 'oncely/postgres';
import { idempotency } from 'oncely/server';
import type pg from 'pg';
import type { Payment, RunningApp } from './node-app.js';
import { toRequest, writeResponse } from './serve-fetch.js';

export async function startFetchApp(pool: pg.Pool): Promise<RunningApp> {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS example_payments (
       id serial PRIMARY KEY, key text NOT NULL, account text NOT NULL, amount integer NOT NULL)`,
  );
  const guard = idempotency<pg.PoolClient>({
    store: postgresIdempotencyStore({ pool, table: 'example_idempotency' }),
    scopeOf: (request) => request.headers.get('x-account') ?? 'anonymous',
    routes: { 'POST /payments': {} },
  });

  const handler = (request: Request): Promise<Response> =>
    guard.withIdempotency(request, async (tx, req) => {
      const { amount } = (await req.json()) as { amount: number };
      // The provider call takes 100 ms, inside the transaction: duplicates overlap it.
      await tx.query('SELECT pg_sleep(0.1)');
      const { rows } = await tx.query<{ id: number }>(
        'INSERT INTO example_payments (key, account, amount) VALUES ($1, $2, $3) RETURNING id',
        [req.headers.get('idempotency-key'), req.headers.get('x-account'), amount],
      );
      const id = `pay_${rows[0]?.id}`;
      return Response.json({ id, amount }, { status: 201, headers: { Location: `/payments/${id}` } });
    });

  const server = createServer((req, res) => {
    toRequest(req)
      .then(handler)
      .then((response) => writeResponse(res, response))
      .catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ledger: async () => {
      const { rows } = await pool.query<{ id: number; key: string; account: string; amount: number }>(
        'SELECT id, key, account, amount FROM example_payments ORDER BY id',
      );
      return rows.map((r): Payment => ({ id: `pay_${r.id}`, key: r.key, account: r.account, amount: r.amount }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
