/**
 * The servers of bench/server.ts, in a process of their own: the same small
 * payment handler bare and guarded by `oncely/server` (memory store), in the
 * Fetch style (through a minimal node:http adapter) and the Connect style.
 * Prints `{"ports": {...}}` once listening; answers each line on stdin with
 * its CPU time so far (`{"cpuUs": n}`), so the parent can charge each run.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
// The built package, as an application runs it (`npm run bench` builds first): tsx's transform of
// the sources adds a `__name` call per closure made, which profiles showed on this path.
import { idempotency, memoryIdempotencyStore } from 'oncely/server';

let n = 0;
const fetchHandler = async (request: Request): Promise<Response> => {
  const body = (await request.json()) as { amount: number };
  n += 1;
  return Response.json({ id: `pay_${n}`, amount: body.amount }, { status: 201 });
};

const connectHandler = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, bytes?: Buffer) => {
  const body = (req.body ?? JSON.parse(String(bytes))) as { amount: number };
  n += 1;
  res.writeHead(201, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ id: `pay_${n}`, amount: body.amount }));
};

const guard = () =>
  idempotency({
    store: memoryIdempotencyStore(),
    scopeOf: (request) => request.headers.get('x-account') ?? '',
    routes: { 'POST /payments': {} },
  });
/** The Express way: the caller's identity from Node's request (as an auth middleware leaves it), no `Request` built. */
const nodeGuard = idempotency({
  store: memoryIdempotencyStore(),
  nodeScopeOf: (req) => String(req.headers['x-account'] ?? ''),
  routes: { 'POST /payments': {} },
});

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method ?? 'GET',
    headers,
    body: Buffer.concat(chunks),
  });
}

function serveFetch(handler: (request: Request) => Promise<Response>) {
  return createServer((req, res) => {
    toRequest(req)
      .then(handler)
      .then(async (response) => {
        const body = Buffer.from(await response.arrayBuffer());
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(body);
      })
      .catch(() => req.socket.destroy());
  });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const connectGuard = guard();
const servers = {
  'fetch-bare': serveFetch(fetchHandler),
  'fetch-guarded': serveFetch(guard().wrap(fetchHandler)),
  'connect-bare': createServer((req, res) => {
    readBody(req).then((bytes) => connectHandler(req, res, bytes));
  }),
  'connect-guarded': createServer((req, res) => connectGuard.middleware(req, res, () => connectHandler(req, res))),
  'connect-guarded-node': createServer((req, res) => nodeGuard.middleware(req, res, () => connectHandler(req, res))),
};

const ports: Record<string, number> = {};
for (const [name, server] of Object.entries(servers)) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports[name] = (server.address() as AddressInfo).port;
}
process.stdout.write(`${JSON.stringify({ ports })}\n`);
createInterface({ input: process.stdin }).on('line', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ cpuUs: user + system, userUs: user, systemUs: system })}\n`);
});
