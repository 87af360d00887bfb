/**
 * Child process of the fleet benchmark: the API every worker posts to, on
 * 127.0.0.1, answering each POST after 50 ms (a payment provider's latency).
 * In its own process so its CPU is not the workers'. It counts requests per
 * idempotency key, so the benchmark can tell that no operation was sent twice.
 */
import { createServer } from 'node:http';

const LATENCY_MS = Number(process.argv[2] ?? 50);
const answer = Buffer.from(JSON.stringify({ id: 'pay_1', status: 'succeeded' }));
const perKey = new Map<string, number>();
let requests = 0;

const server = createServer((req, res) => {
  requests++;
  const key = req.headers['idempotency-key'];
  if (typeof key === 'string') perKey.set(key, (perKey.get(key) ?? 0) + 1);
  req.resume();
  req.on('end', () => {
    setTimeout(() => {
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    }, LATENCY_MS);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.send?.({ port: address.port });
});

process.on('message', (message) => {
  if (message !== 'stats') return;
  const cpu = process.cpuUsage();
  let sentTwice = 0;
  for (const n of perKey.values()) if (n > 1) sentTwice++;
  process.send?.({ requests, keys: perKey.size, sentTwice, cpuMs: (cpu.user + cpu.system) / 1000 });
});
process.on('disconnect', () => process.exit(0));
