/**
 * The local server of the resume-at-scale benchmark: a plain `node:http`
 * server answering every request with 201 and a small JSON body, counting
 * requests and the distinct idempotency keys they carry (one business effect
 * per key). It runs in the parent process; the resuming client is a child.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingServer {
  url: string;
  stats(): ServerStats;
  close(): Promise<void>;
}

export interface ServerStats {
  requests: number;
  /** Distinct `Idempotency-Key` values seen: the business effects. */
  effects: number;
  /** Requests that repeated a key already seen. */
  repeats: number;
  /** Requests without a key. */
  unkeyed: number;
  /** `performance.timeOrigin + now()` of the first and last request (ms since epoch). */
  firstAt: number | undefined;
  lastAt: number | undefined;
}

const answer = Buffer.from(JSON.stringify({ id: 'pay_1', status: 'succeeded', amount: 4800, currency: 'EUR' }));

function keyOf(req: IncomingMessage): string | undefined {
  const value = req.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}

export async function startCountingServer(): Promise<CountingServer> {
  const keys = new Set<string>();
  const stats: ServerStats = {
    requests: 0,
    effects: 0,
    repeats: 0,
    unkeyed: 0,
    firstAt: undefined,
    lastAt: undefined,
  };
  const server = createServer((req, res) => {
    const at = Date.now();
    stats.requests++;
    stats.firstAt ??= at;
    stats.lastAt = at;
    const key = keyOf(req);
    if (key === undefined) stats.unkeyed++;
    else if (keys.has(key)) stats.repeats++;
    else keys.add(key);
    stats.effects = keys.size;
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ ...stats }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
