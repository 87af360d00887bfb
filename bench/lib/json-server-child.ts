/**
 * Child process of the overhead benchmark: a plain `node:http` server on
 * 127.0.0.1 answering every POST with a small JSON body. It runs in its own
 * process so that its CPU is not charged to the client being measured.
 */
import { createServer } from 'node:http';

const answer = Buffer.from(JSON.stringify({ id: 'pay_1', status: 'succeeded', amount: 4800, currency: 'EUR' }));
let requests = 0;

const server = createServer((req, res) => {
  requests++;
  req.resume();
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.send?.({ port: address.port });
});
process.on('message', (message) => {
  if (message === 'count') process.send?.({ requests });
});
process.on('disconnect', () => process.exit(0));
