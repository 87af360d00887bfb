/**
 * The fleet benchmark (issue 29): 1, 2, 4 and 8 worker processes drain one
 * PostgreSQL table of payments, each a POST to an API in its own process
 * answering in 50 ms, `concurrency` 8 per worker. Beside them, the memory
 * store in one process sends as many operations to the same API.
 *
 * Per fleet size: operations/s, statements per operation (every statement
 * the workers' pools sent, counted through a wrapped pool), the claim
 * statement's round trip p50/p99, and CPU per operation of the workers, the
 * database (its postmaster and backends, from /proc) and the API, so a
 * reader can tell a queue limit from the machine's.
 *
 * Method: a throwaway cluster started like the tests start theirs; per
 * fleet size, fresh worker processes drain a warm-up batch (unmeasured),
 * then `rounds` measured batches; each batch is written ahead first (by a
 * client that may not send: pending, unleased, no attempt), then every
 * worker is told to drain. Medians over rounds.
 *
 * Contenders: graphile-worker (a dev dependency the issue asks for) is not
 * installed here; a contender is one more worker child speaking the same
 * IPC protocol (bench/lib/fleet-worker-child.ts: `drain` → `DrainReport`),
 * added to `CONTENDERS` below.
 *
 *   npx tsx bench/fleet.ts [--quick] [--rounds=N] [--ops=300] [--json <file>]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient } from 'oncely/node';
import { postgresStore } from 'oncely/postgres';
import { findPostgresBin, startCluster } from '../examples/fleet/cluster.js';
import type { DrainReport, WorkerConfig } from './lib/fleet-worker-child.js';
import { postmasterPid, treeCpuMs } from './lib/proc-cpu.js';
import { emit, quick, roundsOption, type TargetCheck } from './lib/section.js';
import { fmtFixed, fmtInt, fmtMs, fmtRatio, median, quantile, table } from './lib/stats.js';

const FLEETS = [1, 2, 4, 8];
const CONCURRENCY = 8;
const LATENCY_MS = 50;
const ROUNDS = roundsOption(quick ? 1 : 3);
const OPS = Number(process.argv.find((a) => a.startsWith('--ops='))?.slice(6) ?? (quick ? 100 : 300));
const WARMUP = quick ? 50 : 150;
const TABLE = 'fleet_bench';
const child = (name: string) => fileURLToPath(new URL(`./lib/${name}`, import.meta.url));

/** Contenders besides oncely, by name: each a worker child speaking the DrainReport protocol. Empty: none installed. */
const CONTENDERS: { name: string; file: string }[] = [];

interface Row {
  workers: number;
  opsPerSec: number;
  statementsPerOp: number;
  claimP50: number;
  claimP99: number;
  workerCpuPerOp: number;
  dbCpuPerOp: number;
  apiCpuPerOp: number;
  sentTwice: number;
}

function forkChild(file: string, args: string[]): Promise<{ child: ChildProcess; first: unknown }> {
  const proc = fork(file, args, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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

/** Writes `count` payments ahead, pending and unleased, with no attempt yet: a backlog for the fleet. */
async function backlog(url: string, api: string, count: number, from: number): Promise<void> {
  const store = postgresStore({ connectionString: url, table: TABLE, poolSize: 8 });
  const client = createClient({ store, baseUrl: api, owner: 'enqueuer', mayAttempt: () => false });
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) => from + i + j);
    await Promise.all(
      batch.map((n) => client.enqueue({ method: 'POST', url: '/payments', json: { payment: n, amount: 100 } })),
    );
  }
  await client.close();
  await store.close();
}

async function main(): Promise<void> {
  const bin = findPostgresBin();
  if (bin === undefined) throw new Error('PostgreSQL server binaries not found (Debian: apt-get install postgresql)');
  const cluster = await startCluster(bin);
  const server = await forkChild(child('fleet-server-child.ts'), [`${LATENCY_MS}`]);
  const api = `http://127.0.0.1:${(server.first as { port: number }).port}`;
  const apiStats = () => ask<{ requests: number; sentTwice: number; cpuMs: number }>(server.child, 'stats');
  const postmaster = postmasterPid(cluster.port);
  await postgresStore({ connectionString: cluster.url, table: TABLE }).migrate();
  let enqueued = 0;
  const rows: Row[] = [];
  const memoryRounds: number[] = [];
  const memoryCpu: number[] = [];
  try {
    for (const size of FLEETS) {
      const workers = await Promise.all(
        Array.from({ length: size }, async (_, i) => {
          const config: WorkerConfig = {
            mode: 'postgres',
            name: `w${i}`,
            api,
            concurrency: CONCURRENCY,
            leaseMs: 5_000,
            url: cluster.url,
            table: TABLE,
          };
          return (await forkChild(child('fleet-worker-child.ts'), [JSON.stringify(config)])).child;
        }),
      );
      const drain = () => Promise.all(workers.map((w) => ask<DrainReport>(w, { cmd: 'drain' })));
      await backlog(cluster.url, api, WARMUP, enqueued);
      enqueued += WARMUP;
      await drain();
      const rounds: Row[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await backlog(cluster.url, api, OPS, enqueued);
        enqueued += OPS;
        const before = await apiStats();
        const db0 = treeCpuMs(postmaster);
        const t0 = performance.now();
        const reports = await drain();
        const wallMs = performance.now() - t0;
        const db1 = treeCpuMs(postmaster);
        const after = await apiStats();
        // Every worker returns only once nothing is open: the whole batch was drained. (What each worker's
        // `resume()` counts as driven may include operations it found finished by another.)
        const ops = OPS;
        const claims = reports.flatMap((r) => r.claimMs);
        rounds.push({
          workers: size,
          opsPerSec: (ops / wallMs) * 1000,
          statementsPerOp: reports.reduce((s, r) => s + r.statements, 0) / ops,
          claimP50: quantile(claims, 0.5),
          claimP99: quantile(claims, 0.99),
          workerCpuPerOp: reports.reduce((s, r) => s + r.cpuMs, 0) / ops,
          dbCpuPerOp: (db1 - db0) / ops,
          apiCpuPerOp: (after.cpuMs - before.cpuMs) / ops,
          sentTwice: after.sentTwice,
        });
        console.error(`[fleet] ${size} workers, round ${round + 1}: ${fmtInt(rounds.at(-1)?.opsPerSec ?? 0)} ops/s`);
      }
      await Promise.all(workers.map((w) => new Promise((resolve) => w.once('exit', resolve).send({ cmd: 'exit' }))));
      const pick = (f: (r: Row) => number) => median(rounds.map(f));
      rows.push({
        workers: size,
        opsPerSec: pick((r) => r.opsPerSec),
        statementsPerOp: pick((r) => r.statementsPerOp),
        claimP50: pick((r) => r.claimP50),
        claimP99: pick((r) => r.claimP99),
        workerCpuPerOp: pick((r) => r.workerCpuPerOp),
        dbCpuPerOp: pick((r) => r.dbCpuPerOp),
        apiCpuPerOp: pick((r) => r.apiCpuPerOp),
        sentTwice: Math.max(...rounds.map((r) => r.sentTwice)),
      });
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
    await new Promise((resolve) => memory.once('exit', resolve).send({ cmd: 'exit' }));
  } finally {
    server.child.kill();
    await cluster.stop();
  }
  report(rows, median(memoryRounds), median(memoryCpu));
}

function report(rows: Row[], memoryOpsPerSec: number, memoryCpuPerOp: number): void {
  const one = rows[0]?.opsPerSec ?? Number.NaN;
  const text = [
    `${OPS} operations per round, ${ROUNDS} round(s) after a ${WARMUP}-operation warm-up; API answering in ${LATENCY_MS} ms; concurrency ${CONCURRENCY} per worker; medians.`,
    '',
    table(
      [
        'workers',
        'ops/s',
        '× 1 worker',
        '× memory store',
        'statements/op',
        'claim p50',
        'claim p99',
        'CPU ms/op workers · db · API',
        'sent twice',
      ],
      [
        ...rows.map((r) => [
          `${r.workers}`,
          fmtInt(r.opsPerSec),
          fmtRatio(r.opsPerSec / one),
          fmtRatio(r.opsPerSec / memoryOpsPerSec),
          fmtFixed(r.statementsPerOp),
          `${fmtFixed(r.claimP50, 1)} ms`,
          `${fmtFixed(r.claimP99, 1)} ms`,
          `${fmtFixed(r.workerCpuPerOp)} · ${fmtFixed(r.dbCpuPerOp)} · ${fmtFixed(r.apiCpuPerOp)}`,
          `${r.sentTwice}`,
        ]),
        ['memory store, 1 process', fmtInt(memoryOpsPerSec), '', '1.00×', '–', '–', '–', fmtFixed(memoryCpuPerOp), '–'],
      ],
    ),
    '',
    CONTENDERS.length === 0
      ? 'graphile-worker: not measured (not installed; add it as a dev dependency and a contender child, see bench/fleet.ts).'
      : '',
  ].join('\n');
  const at = (n: number) => rows.find((r) => r.workers === n);
  const targets: TargetCheck[] = [
    ...[1, 4, 8].map((n) => ({
      name: `statements per operation ≤ 3 at ${n} worker(s)`,
      measured: fmtFixed(at(n)?.statementsPerOp ?? Number.NaN),
      met: (at(n)?.statementsPerOp ?? Number.POSITIVE_INFINITY) <= 3,
    })),
    ...[1, 2].map((n) => ({
      name: `claim statement p50 ≤ 5 ms at ${n} worker(s)`,
      measured: fmtMs(at(n)?.claimP50 ?? Number.NaN),
      met: (at(n)?.claimP50 ?? Number.POSITIVE_INFINITY) <= 5,
    })),
    {
      name: 'no operation sent twice by the fleet',
      measured: `${Math.max(...rows.map((r) => r.sentTwice))} keys`,
      met: rows.every((r) => r.sentTwice === 0),
    },
    {
      name: 'throughput ≥ 0.9× graphile-worker at 1, 2, 4 and 8 processes',
      measured: 'not measured: graphile-worker is not installed',
      met: false,
    },
  ];
  emit({ id: 'fleet', title: 'Fleet: PostgreSQL workers draining one table', text, targets, data: { rows } });
}

await main();
