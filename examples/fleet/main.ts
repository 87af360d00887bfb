/**
 * A fleet on PostgreSQL: four worker processes share one table of payments.
 * Each accepts its share and sends it; one worker is SIGKILLed mid-run, and
 * the other three take over the payments it held once its leases end — with
 * the keys they were given, so the API never charges twice. The summary
 * counts the API's effects per key.
 *
 * Needs PostgreSQL's server binaries (Debian: apt-get install postgresql);
 * the script starts a throwaway cluster in a temp directory and removes it.
 *
 * Run: npx tsx examples/fleet/main.ts [payments=1000]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { postgresStore } from 'oncely/postgres';
import { startReferenceServer } from 'oncely/testing';
import { findPostgresBin, startCluster } from './cluster.js';

const WORKERS = 4;
const payments = Number(process.argv[2] ?? 1_000);
const worker = fileURLToPath(new URL('./worker.ts', import.meta.url));

const bin = findPostgresBin();
if (bin === undefined) {
  console.error('PostgreSQL server binaries not found (Debian: apt-get install postgresql).');
  process.exit(1);
}
const cluster = await startCluster(bin);
// A payment takes the API 100 ms, so the workers have payments in flight when one of them dies.
const api = await startReferenceServer({
  handle: async (req) => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { status: 201, body: { id: `pay_${req.effectNumber}` } };
  },
});
console.log(`PostgreSQL on 127.0.0.1:${cluster.port}, payment API on ${api.url}`);

// Migrate once, before the fleet starts (each worker would also do it, under an advisory lock).
const admin = postgresStore({ connectionString: cluster.url, table: 'fleet_payments' });
console.log(`schema migrations applied: ${(await admin.migrate()).join(', ') || 'none'}`);
// Leases are judged on the database's clock (a worker's clock never decides a takeover): shown for monitoring.
console.log(`clock skew against the database: ${Math.round(await admin.clockSkewMs())} ms`);

const started = Date.now();
const share = Math.ceil(payments / WORKERS);
const children: { name: string; child: ChildProcess; exited: Promise<number | null> }[] = [];
for (let w = 0; w < WORKERS; w++) {
  const name = `worker-${w + 1}`;
  const first = w * share;
  const count = Math.max(0, Math.min(share, payments - first));
  // node itself (with the tsx loader), not the tsx wrapper: SIGKILL must hit the worker.
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', worker, name, cluster.url, api.url, `${first}`, `${count}`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => process.stdout.write(`  ${chunk.toString()}`));
  children.push({ name, child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) });
}

// Kill worker 2 as soon as it has accepted its share (every one of its payments is written
// ahead): the last of them are still in flight at the API, under its leases.
const victim = children[1];
let accepted = false;
victim?.child.stdout?.on('data', (chunk: Buffer) => {
  if (chunk.toString().includes('accepted')) accepted = true;
});
while (!accepted) await new Promise((r) => setTimeout(r, 5));
victim?.child.kill('SIGKILL');
console.log(`  ${victim?.name}: SIGKILLed after ${api.ledger.totalEffects()} of ${payments} effects`);

const codes = await Promise.all(children.map((c) => c.exited));
const drainMs = Date.now() - started;
const records = await admin.list();
await admin.close();

const keys = records.map((r) => r.key);
const perKey = new Map<number, number>();
for (const key of keys) {
  const n = api.ledger.effectCount(key);
  perKey.set(n, (perKey.get(n) ?? 0) + 1);
}
const succeeded = records.filter((r) => r.state === 'succeeded').length;
const takenOver = records.filter((r) => r.attempts.some((a) => a.owner !== r.attempts[0]?.owner)).length;
console.log('\nSummary');
console.log(`  payments stored:    ${records.length} (succeeded ${succeeded})`);
console.log(`  requests to the API: ${api.ledger.requests.length}`);
console.log(`  effects per key:    ${[...perKey].map(([n, k]) => `${k} keys × ${n}`).join(', ')}`);
console.log(`  taken over from the dead worker: ${takenOver}`);
console.log(`  throughput: ${((payments / drainMs) * 1000).toFixed(0)} payments/s over the fleet`);
console.log(
  `  drained in ${drainMs} ms; exits: ${children.map((c, i) => `${c.name}=${codes[i] ?? 'SIGKILL'}`).join(' ')}`,
);

const ok =
  records.length === payments &&
  succeeded === payments &&
  perKey.get(1) === payments &&
  api.ledger.totalEffects() === payments &&
  codes.every((code, i) => i === 1 || code === 0);
console.log(ok ? '✔ Every payment took effect exactly once.' : '✘ Something went wrong: see above.');
await api.close();
await cluster.stop();
process.exit(ok ? 0 : 1);
