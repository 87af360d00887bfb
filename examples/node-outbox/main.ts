/**
 * Outbox across a restart: a Node app buffers actions while the API is down,
 * is killed, the API comes back, and the restarted app drains the buffered
 * actions — each exactly once, with the key it was given before the crash.
 *
 * Run: npx tsx examples/node-outbox/main.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startReferenceServer } from 'oncely/testing';

const app = fileURLToPath(new URL('./app.ts', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'oncely-outbox-'));
const port = await freePort();
const api = `http://127.0.0.1:${port}`;

function start(mode: 'enqueue' | 'drain'): { child: ChildProcess; output: Promise<string>; lines: string[] } {
  // node itself (with the tsx loader), not the tsx wrapper: SIGKILL must hit the app process.
  const child = spawn(process.execPath, ['--import', 'tsx', app, mode, dir, api], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const output = new Promise<string>((resolve) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const parts = text.split('\n');
      text = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        console.log(`  [${mode}] ${line}`);
      }
    });
    child.on('exit', () => resolve(lines.join('\n')));
  });
  return { child, output, lines };
}

console.log(`1. The API (${api}) is down. The app buffers 5 actions and keeps trying.`);
const first = start('enqueue');
while (first.lines.filter((l) => l.startsWith('attempt')).length < 5) await new Promise((r) => setTimeout(r, 50));
console.log('2. The app is killed (SIGKILL) while the actions are still pending.');
first.child.kill('SIGKILL');
await first.output;
const keys = first.lines.filter((l) => l.startsWith('buffered')).map((l) => l.split('key=')[1]);

console.log('3. The API comes back.');
const server = await startReferenceServer({ port });
console.log('4. The app restarts and drains its outbox.');
const second = start('drain');
await second.output;
const exitCode = second.child.exitCode;

console.log('\nThe API’s ledger:');
let ok = exitCode === 0 && keys.length === 5 && second.lines.filter((l) => l.includes(': succeeded')).length === 5;
for (const key of keys) {
  const requests = server.ledger.requestsFor(key ?? '');
  const effects = server.ledger.effectCount(key ?? '');
  const good = effects === 1 && requests.every((r) => r.key === key);
  ok &&= good;
  console.log(
    `  ${good ? '✔' : '✘'} ${key}: effects=${effects}, requests=${requests.length}, all with the pre-crash key`,
  );
}
await server.close();
await rm(dir, { recursive: true, force: true });
console.log(ok ? '\nEvery buffered action took effect exactly once after the restart.' : '\nOutbox check failed.');
process.exit(ok ? 0 : 1);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}
