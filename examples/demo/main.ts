/**
 * The oncely demo: payments through a flaky network, each taking effect
 * exactly once. Starts the reference idempotent server with scripted faults
 * (lost responses after commit, connection resets, 503 with Retry-After, a
 * double click, a process killed mid-payment), sends payments through a
 * durable file store, prints the timeline and the server's proof.
 *
 * Run: npm run demo
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'oncely';
import { fileStore } from 'oncely/node';
import { startReferenceServer } from 'oncely/testing';
import { attachTimeline } from './timeline.js';

const server = await startReferenceServer();
const dir = await mkdtemp(join(tmpdir(), 'oncely-demo-'));
const client = createClient({
  baseUrl: server.url,
  store: fileStore({ dir }),
  // Short timings so the demo runs in seconds; production defaults are longer.
  policy: { attemptTimeoutMs: 800, backoff: { baseDelayMs: 100 }, retryAfter: { jitterMs: 300 } },
  // The crashed child's lease length: a lease is taken over once watched unchanged for timeout + lease + 1 s.
  leaseMs: 300,
  endpoints: { 'POST /payments': { profile: 'ietf', deadlineMs: 30_000 } },
});
const timeline = attachTimeline(client);

interface Scenario {
  name: string;
  story: string;
  arrange: (key: string) => void;
  doubleClick?: boolean;
}

const scenarios: Scenario[] = [
  { name: 'pay-clean', story: 'a healthy network', arrange: () => {} },
  {
    name: 'pay-lost',
    story: 'the server charges, then the response is lost (timeout): the retry gets the stored result',
    arrange: (key) => server.script({ kind: 'drop-after-commit', match: { key } }),
  },
  {
    name: 'pay-reset',
    story: 'the connection resets after the charge committed',
    arrange: (key) => server.script({ kind: 'reset-after-commit', match: { key } }),
  },
  {
    name: 'pay-503',
    story: 'the server is overloaded: 503 with Retry-After: 1',
    arrange: (key) => server.script({ kind: 'status', status: 503, retryAfter: 1, match: { key } }),
  },
  {
    name: 'pay-early',
    story: 'the connection resets before anything happened',
    arrange: (key) => server.script({ kind: 'reset-before-commit', match: { key } }),
  },
  {
    name: 'pay-double',
    story: 'the user taps "Pay" twice: one key, one charge',
    arrange: () => {},
    doubleClick: true,
  },
];

console.log(`oncely demo: ${scenarios.length} payments against ${server.url}\n`);
let amount = 4_800;
const results = await Promise.all(
  scenarios.map(async (scenario) => {
    const key = `${scenario.name}-${Date.now().toString(36)}`;
    timeline.label(key, scenario.name);
    timeline.print(`${scenario.name.padEnd(12)} ${scenario.story}`);
    scenario.arrange(key);
    const request = {
      method: 'POST',
      url: '/payments',
      key,
      json: { orderId: scenario.name, amount: amount++, currency: 'EUR' },
    };
    const sends = scenario.doubleClick ? [client.send(request), client.send(request)] : [client.send(request)];
    const settled = await Promise.allSettled(sends);
    return { scenario, key, settled };
  }),
);

// A process crash: another process starts a payment, the server charges it,
// and the process is killed before the answer arrives. This process resumes
// the stored operation with the same key: the server replays, no second charge.
const crashKey = `pay-crash-${Date.now().toString(36)}`;
timeline.label(crashKey, 'pay-crash');
timeline.print(`${'pay-crash'.padEnd(12)} another process pays, the server charges, the process is SIGKILLed`);
const hold = server.hold({ key: crashKey });
const child = spawn(
  process.execPath,
  ['--import', 'tsx', fileURLToPath(new URL('./crash-child.ts', import.meta.url)), dir, server.url, crashKey],
  {
    stdio: 'ignore',
  },
);
await hold.arrived;
child.kill('SIGKILL');
await new Promise((resolve) => child.on('exit', resolve));
hold.release();
timeline.print(`${'pay-crash'.padEnd(12)} process killed mid-flight; resuming from the file store`);
let resumedState = 'none';
for (let i = 0; i < 50 && resumedState !== 'succeeded'; i++) {
  // The dead process's lease must expire before anyone else may send.
  await client.resume({
    onOutcome: (outcome) => {
      resumedState = outcome.state;
    },
  });
  if (resumedState !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 200));
}
results.push({ scenario: { name: 'pay-crash', story: '', arrange: () => {} }, key: crashKey, settled: [] });

console.log('\nThe server’s ledger (the proof):');
let ok = true;
for (const { scenario, key, settled } of results) {
  const effects = server.ledger.effectCount(key);
  const requests = server.ledger.requestsFor(key);
  const sameKey = requests.every((r) => r.key === key);
  const succeeded = settled.every((s) => s.status === 'fulfilled') && (await client.get(key))?.state === 'succeeded';
  const good = effects === 1 && sameKey && succeeded;
  ok &&= good;
  console.log(
    `  ${good ? '✔' : '✘'} ${scenario.name.padEnd(12)} effects=${effects}  requests=${requests.length}  every request carried key ${key}`,
  );
}
await client.close();
await server.close();
await rm(dir, { recursive: true, force: true });
console.log(ok ? '\nEvery payment took effect exactly once.' : '\nSomething took effect more or less than once!');
process.exit(ok ? 0 : 1);
