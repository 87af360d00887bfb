/**
 * The two halves together: oncely's client drives two servers guarded by
 * `oncely/server` — a Node `http` app with the Connect-style middleware
 * (memory store) and a Fetch-style app in transactional mode on
 * PostgreSQL — through three faults:
 *
 *   lost      the server commits, the response is lost (a reset): the
 *             client resends with the same key and gets the stored answer;
 *   twins     two devices send the same payment at once: one runs, the
 *             other is told 409 "in progress" and then gets the replay;
 *   reuse     a device reuses a paid key for another amount: 422, refused.
 *
 * Each app's ledger is printed: one effect per payment.
 * PostgreSQL's server binaries are needed for the Fetch app (Debian:
 * apt-get install postgresql); without them it runs on the memory store.
 *
 * Run: npx tsx examples/server/main.ts
 */
import { createClient, memoryStore, OperationError } from 'oncely';
import pg from 'pg';
import { findPostgresBin, type PostgresCluster, startCluster } from '../fleet/cluster.js';
import { startFetchApp } from './fetch-app.js';
import { type RunningApp, startNodeApp } from './node-app.js';

/** A fetch that loses the response of the first request with each listed key, after the server answered. */
function losing(keys: Set<string>): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const key = request.headers.get('idempotency-key');
    const response = await fetch(request);
    if (key === null || !keys.delete(key)) return response;
    await response.arrayBuffer();
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    throw new TypeError('fetch failed', { cause: reset });
  };
}

/** One device: its own store, its own account header. */
function device(app: RunningApp, lose = new Set<string>()) {
  return createClient({
    baseUrl: app.url,
    store: memoryStore(),
    fetch: losing(lose),
    headers: () => ({ 'x-account': 'acct_42' }),
    endpoints: { 'POST /payments': { backoff: { baseDelayMs: 20, maxDelayMs: 200 } } },
  });
}

let failures = 0;
function verdict(ok: boolean, line: string): void {
  if (!ok) failures += 1;
  console.log(`  ${ok ? '✔' : '✘'} ${line}`);
}

async function drive(name: string, app: RunningApp): Promise<void> {
  console.log(`\n${name} on ${app.url}`);
  const run = Date.now().toString(36);
  const key = (what: string) => `${what}-${run}`;

  // lost: the first response vanishes after the commit.
  const phone = device(app, new Set([key('lost')]));
  const lost = await phone.send({ method: 'POST', url: '/payments', key: key('lost'), json: { amount: 1200 } });
  verdict(
    lost.status === 201 && lost.replayed === true && lost.attempts === 2,
    `lost    response lost, resent with the same key: ${lost.status} replayed after ${lost.attempts} attempts`,
  );

  // twins: two devices, one payment, at the same moment.
  const [a, b] = [device(app), device(app)];
  const both = await Promise.all(
    [a, b].map((c) => c.send({ method: 'POST', url: '/payments', key: key('twins'), json: { amount: 800 } })),
  );
  const ids = both.map((r) => (r.data as { id: string }).id);
  verdict(
    ids[0] === ids[1] && both.some((r) => r.replayed === true),
    `twins   two devices at once: both answered ${ids[0]} (${both.map((r) => `${r.attempts} attempt(s)`).join(', ')})`,
  );

  // reuse: the paid key, another amount, from a third device.
  const other = device(app);
  const reuse = await other
    .send({ method: 'POST', url: '/payments', key: key('lost'), json: { amount: 9900 } })
    .then(() => undefined)
    .catch((error: unknown) => error);
  verdict(
    reuse instanceof OperationError && reuse.status === 422,
    `reuse   the paid key with another amount: ${reuse instanceof OperationError ? `${reuse.status}, state ${reuse.state}` : 'accepted!'}`,
  );

  const ledger = await app.ledger();
  console.log('  ledger:');
  for (const p of ledger) console.log(`    ${p.id.padEnd(8)} ${p.key.padEnd(20)} ${p.account}  ${p.amount}`);
  const perKey = new Map<string, number>();
  for (const p of ledger) perKey.set(p.key, (perKey.get(p.key) ?? 0) + 1);
  verdict(
    ledger.length === 2 && [...perKey.values()].every((n) => n === 1),
    `effects per key: ${[...perKey].map(([k, n]) => `${k.split('-')[0]}=${n}`).join(', ')}`,
  );
  for (const c of [phone, a, b, other]) await c.close();
}

const node = await startNodeApp();
await drive('Node http + Connect middleware (memory store)', node);
await node.close();

const bin = findPostgresBin();
let cluster: PostgresCluster | undefined;
let pool: pg.Pool | undefined;
if (bin === undefined) {
  console.log('\n(PostgreSQL binaries not found: skipping the transactional Fetch app)');
} else {
  cluster = await startCluster(bin);
  pool = new pg.Pool({ connectionString: cluster.url, max: 8 });
  // node-postgres reports an idle connection's death (a restart, a failover) on the pool, and
  // unheard it crashes the process. pool.end() resolves before its connections have closed, so
  // one may still die as the cluster stops below: that one is expected.
  const own = pool;
  pool.on('error', (error) => {
    if (!own.ending) console.error(`an idle PostgreSQL connection died: ${error.message}`);
  });
  const fetchApp = await startFetchApp(pool);
  await drive('Fetch handler, transactional on PostgreSQL', fetchApp);
  await fetchApp.close();
  await pool.end();
  await cluster.stop();
}

console.log(failures === 0 ? '\n✔ Every payment took effect exactly once.' : `\n✘ ${failures} check(s) failed.`);
process.exitCode = failures === 0 ? 0 : 1;
