/**
 * node:http's global agent keeps connections alive between requests
 * (Node >= 19), and its idle sockets are unref'd: an `oncely/node` client
 * that sent and was never closed does not keep its process alive. The
 * server here never closes an idle connection (no keep-alive timeout); a
 * socket that held the process would hold it until the agent's own idle
 * timeout closed it, and the child would then exit with no idle socket left.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./fixtures/send-twice.ts', import.meta.url));
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

it('a process exits by itself after sending, its connection still open and reused', async () => {
  let connections = 0;
  const keys = new Set<string>();
  const server = createServer((req, res) => {
    keys.add(String(req.headers['idempotency-key']));
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 0;
  server.on('connection', () => {
    connections++;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // No IPC channel: nothing but the child's own handles decides when it exits.
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += String(chunk);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code).toBe(0);
  // It exited with its idle connection still open: not held until the agent's idle timeout closed it.
  expect(out).toBe('201\n201\nidle sockets at exit: 1\n');
  // Two keyed sends over one kept-alive connection: the socket was pooled, not closed after each answer.
  expect(keys.size).toBe(2);
  expect(connections).toBe(1);
});
