/**
 * The fleet benchmark (issue 29): 1, 2, 4 and 8 worker processes drain one
 * PostgreSQL database of payments, each a POST to an API in its own process
 * answering in 50 ms, `concurrency` 8 per worker process. The contenders:
 *
 * - oncely: workers on one `postgresStore` table, each draining with
 *   `resume()` (claims through `claimDue`);
 * - graphile-worker 0.17.3 (0.18 needs Node 22.18): the same payment as a
 *   task sending with `fetch`, as its users write tasks, each process
 *   draining with `runOnce` (the targets are against this one);
 * - the same graphile-worker task sending with node:http's global agent, as
 *   oncely/node sends: graphile-worker's queue cost apart from its HTTP client's;
 * - the memory store in one process, sending as many operations to the same API.
 *
 * Per fleet size and contender: operations/s, oncely's as a ratio to
 * graphile-worker's (the median of per-round ratios), statements per
 * operation (pg_stat_statements: the server's own count, for both), the
 * claim statement's round trip p50/p99 and, for oncely, the whole claim call
 * beside it, and CPU per operation of the workers, the database (its
 * postmaster and backends, from /proc) and the API, so a reader can tell a
 * queue limit from the machine's.
 *
 * Method: a throwaway cluster started like the tests start theirs; per fleet
 * size both fleets are started, and each drains a warm-up batch
 * (unmeasured); then `rounds` rounds, each contender once per round in a
 * rotated order: its backlog is written ahead (oncely: pending, unleased, no
 * attempt, by a client that may not send; graphile-worker: `addJobs`), then
 * every worker of that fleet is told to drain, and the clock stops when the
 * last one reports nothing left. The other fleet idles meanwhile. Medians
 * over rounds.
 *
 *   npx tsx bench/fleet.ts [--quick] [--rounds=N] [--ops=300] [--only-sizes=1,2] [--unprepared] [--cpu-prof=<dir>] [--json <file>] [--save]
 *
 * `--save` puts this section into bench/results.json (replacing the fleet
 * section there, keeping the others) for `npm run figures`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findPostgresBin, startCluster } from '../examples/fleet/cluster.js';
import { FLEET_CLUSTER_SETTINGS, type FleetDatabase, openFleetDatabase, type StatementCount } from './lib/fleet-db.js';
import { type ContenderName, type ContenderRound, type FleetRow, fleetSection, summarise } from './lib/fleet-report.js';
import { saveSection } from './lib/fleet-save.js';
import type { DrainReport, WorkerConfig } from './lib/fleet-worker-child.js';
import { postmasterPid, treeCpuMs } from './lib/proc-cpu.js';
import { emit, quick, roundsOption } from './lib/section.js';
import { fmtInt, median, rotate } from './lib/stats.js';

const sizesArg = process.argv.find((a) => a.startsWith('--only-sizes='))?.slice('--only-sizes='.length);
const FLEETS = sizesArg === undefined ? [1, 2, 4, 8] : sizesArg.split(',').map(Number);
const CONCURRENCY = 8;
const LATENCY_MS = 50;
const ROUNDS = roundsOption(quick ? 1 : 3);
const OPS = Number(process.argv.find((a) => a.startsWith('--ops='))?.slice(6) ?? (quick ? 100 : 300));
const WARMUP = quick ? 50 : 150;
/** `--unprepared`: oncely sends its statements unnamed (`preparedStatements: false`), as it did before they were named. */
const UNPREPARED = process.argv.includes('--unprepared');
const TABLE = 'fleet_bench';
const child = (name: string) => fileURLToPath(new URL(`./lib/${name}`, import.meta.url));

interface Contender {
  name: ContenderName;
  file: string;
  /** How the contender's task sends (graphile-worker's; oncely/node chooses its own). */
  send?: WorkerConfig['send'];
  /** How the contender's claim statement starts, as pg_stat_statements shows it. */
  claimStarts: string;
  backlog(db: FleetDatabase, count: number, from: number): Promise<void>;
}

const CONTENDERS: Contender[] = [
  {
    name: 'oncely',
    file: 'fleet-worker-child.ts',
    claimStarts: 'WITH picked',
    backlog: (db, count, from) => db.backlogOncely(count, from),
  },
  {
    name: 'graphile-worker',
    file: 'fleet-graphile-child.ts',
    claimStarts: 'with j as',
    backlog: (db, count, from) => db.backlogGraphile(count, from),
  },
  {
    name: 'graphile-worker (node:http)',
    file: 'fleet-graphile-child.ts',
    send: 'node:http',
    claimStarts: 'with j as',
    backlog: (db, count, from) => db.backlogGraphile(count, from),
  },
];

/** `--cpu-prof=<dir>`: every child writes a V8 CPU profile there (where a worker's time goes). */
const CPU_PROF = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);

function forkChild(file: string, args: string[]): Promise<{ child: ChildProcess; first: unknown }> {
  const proc = fork(file, args, {
    execArgv: ['--import', 'tsx', ...(CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // graphile-worker's switch for not formatting a log line per job (oncely writes none either).
    env: { ...process.env, NO_LOG_SUCCESS: '1' },
  });
  return new Promise((resolve, reject) => {
    proc.once('message', (first) => resolve({ child: proc, first }));
    proc.once('exit', (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
  });
}

function ask<T>(proc: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    proc.once('message', (reply) => resolve(reply as T));
    proc.send(message as never);
  });
}

const stop = (procs: ChildProcess[]) =>
  Promise.all(procs.map((w) => new Promise((resolve) => w.once('exit', resolve).send({ cmd: 'exit' }))));

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error('PostgreSQL server binaries not found (Debian: apt-get install postgresql)');
  const cluster = await startCluster(bin, { settings: FLEET_CLUSTER_SETTINGS });
  const server = await forkChild(child('fleet-server-child.ts'), [`${LATENCY_MS}`]);
  const api = `http://127.0.0.1:${(server.first as { port: number }).port}`;
  const apiStats = () => ask<{ requests: number; sentTwice: number; cpuMs: number }>(server.child, 'stats');
  const postmaster = postmasterPid(cluster.port);
  const db = await openFleetDatabase(cluster.url, api, TABLE);
  let enqueued = 0;
  const rows: FleetRow[] = [];
  const memoryRounds: number[] = [];
  const memoryCpu: number[] = [];
  try {
    for (const size of FLEETS) {
      const fleets = new Map<Contender, ChildProcess[]>();
      for (const contender of CONTENDERS) {
        const workers = await Promise.all(
          Array.from({ length: size }, async (_, i) => {
            const config: WorkerConfig = {
              mode: 'postgres',
              name: `${contender.name}-w${i}`,
              api,
              concurrency: CONCURRENCY,
              leaseMs: 5_000,
              url: cluster.url,
              table: TABLE,
              preparedStatements: !UNPREPARED,
              ...(contender.send === undefined ? {} : { send: contender.send }),
            };
            return (await forkChild(child(contender.file), [JSON.stringify(config)])).child;
          }),
        );
        fleets.set(contender, workers);
      }
      const drain = async (contender: Contender, count: number) => {
        await contender.backlog(db, count, enqueued);
        enqueued += count;
        const workers = fleets.get(contender) ?? [];
        await db.reset();
        const before = await apiStats();
        const db0 = treeCpuMs(postmaster);
        const t0 = performance.now();
        const reports = await Promise.all(workers.map((w) => ask<DrainReport>(w, { cmd: 'drain' })));
        const wallMs = performance.now() - t0;
        const db1 = treeCpuMs(postmaster);
        const after = await apiStats();
        const statements: StatementCount[] = await db.statements();
        return { reports, wallMs, dbCpuMs: db1 - db0, apiCpuMs: after.cpuMs - before.cpuMs, after, statements };
      };
      // The same warm-up for both: a batch drained, unmeasured.
      for (const contender of CONTENDERS) await drain(contender, WARMUP);
      const rounds: ContenderRound[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const contender of rotate(CONTENDERS, round)) {
          const d = await drain(contender, OPS);
          const claim = d.statements.find((s) => s.query.startsWith(contender.claimStarts));
          rounds.push({
            contender: contender.name,
            round,
            opsPerSec: (OPS / d.wallMs) * 1000,
            statementsPerOp: d.statements.reduce((s, x) => s + x.calls, 0) / OPS,
            claimsPerOp: (claim?.calls ?? Number.NaN) / OPS,
            claimDbMeanMs: claim?.meanMs ?? Number.NaN,
            claimMs: d.reports.flatMap((r) => r.claimMs),
            claimCallMs: d.reports.flatMap((r) => r.claimCallMs),
            workerCpuPerOp: d.reports.reduce((s, r) => s + r.cpuMs, 0) / OPS,
            dbCpuPerOp: d.dbCpuMs / OPS,
            apiCpuPerOp: d.apiCpuMs / OPS,
            sentTwice: d.after.sentTwice,
            topStatements: d.statements.slice(0, 6),
          });
          console.error(
            `[fleet] ${size} worker(s), round ${round + 1}, ${contender.name}: ${fmtInt(rounds.at(-1)?.opsPerSec ?? 0)} ops/s`,
          );
        }
      }
      await stop([...fleets.values()].flat());
      rows.push(summarise(size, rounds));
    }
    // The memory store in one process, same API, same concurrency: what one process does without a shared store.
    const config: WorkerConfig = { mode: 'memory', name: 'memory', api, concurrency: CONCURRENCY, leaseMs: 5_000 };
    const memory = (await forkChild(child('fleet-worker-child.ts'), [JSON.stringify(config)])).child;
    await ask<DrainReport>(memory, { cmd: 'drain', count: WARMUP });
    for (let round = 0; round < ROUNDS; round++) {
      const report = await ask<DrainReport>(memory, { cmd: 'drain', count: OPS });
      memoryRounds.push((report.ops / report.wallMs) * 1000);
      memoryCpu.push(report.cpuMs / report.ops);
    }
    await stop([memory]);
  } finally {
    await db.close();
    server.child.kill();
    await cluster.stop();
  }
  const section = fleetSection(
    rows,
    { opsPerSec: median(memoryRounds), cpuPerOp: median(memoryCpu) },
    {
      ops: OPS,
      rounds: ROUNDS,
      warmup: WARMUP,
      latencyMs: LATENCY_MS,
      concurrency: CONCURRENCY,
    },
    startedAt,
  );
  emit(section);
  if (process.argv.includes('--save')) saveSection(section);
}

await main();
