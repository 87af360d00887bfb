/**
 * A Node `http` app in the Connect style: `guard.middleware` in front of a
 * plain `(req, res)` payment handler, records in memory. Express would take
 * the same middleware with `app.use(guard.middleware)`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { idempotency, memoryIdempotencyStore } from 'oncely/server';

export interface Payment {
  id: string;
  key: string;
  account: string;
  amount: number;
}

export interface RunningApp {
  url: string;
  /** Every payment the business performed, in order. */
  ledger(): Promise<Payment[]>;
  close(): Promise<void>;
}

export async function startNodeApp(): Promise<RunningApp> {
  const ledger: Payment[] = [];
  const guard = idempotency({
    store: memoryIdempotencyStore(),
    scopeOf: (request) => request.headers.get('x-account') ?? 'anonymous',
    routes: { 'POST /payments': {} },
  });

  // The business: a payment provider call that takes 100 ms, so duplicates overlap.
  const pay = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
    const { amount } = req.body as { amount: number };
    await new Promise((resolve) => setTimeout(resolve, 100));
    const payment: Payment = {
      id: `pay_${ledger.length + 1}`,
      key: String(req.headers['idempotency-key']),
      account: String(req.headers['x-account']),
      amount,
    };
    ledger.push(payment);
    res.writeHead(201, { 'Content-Type': 'application/json', Location: `/payments/${payment.id}` });
    res.end(JSON.stringify({ id: payment.id, amount }));
  };

  const server = createServer((req, res) => {
    guard.middleware(req, res, (error?: unknown) => {
      if (error !== undefined) {
        res.statusCode = 500;
        res.end();
        return;
      }
      if (req.method === 'POST' && req.url === '/payments') {
        pay(req, res).catch(() => {
          res.statusCode = 500;
          res.end();
        });
        return;
      }
      res.statusCode = 404;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ledger: async () => [...ledger],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
