/**
 * The server half (issue 30): overhead and statements per request.
 *
 * Overhead: requests/s of a small JSON payment handler, bare and guarded by
 * `oncely/server` (memory store, every request a fresh key), in the Fetch
 * style (through a minimal node:http adapter that reads the returned
 * `Response`'s status, headers and bytes) and the Connect style (with
 * `scopeOf`, which gets a view of Node's request as a Fetch `Request`, and
 * with `nodeScopeOf` on Node's own request, as an Express app reads
 * `req.user`), at 32 requests in flight.
 * The servers run in their own process (bench/lib/server-half-child.ts);
 * after a warm-up, rounds interleave the contenders, and each round's
 * guarded/bare ratio is reported (ratios survive a noisy shared machine;
 * absolute numbers do not), with the server process's CPU time per request,
 * which a busy machine disturbs less than requests/s.
 *
 * Statements: on a throwaway PostgreSQL cluster, `pg_stat_statements`
 * counts the guard's statements per fresh request and per replay
 * (bench/lib/server-statements.ts).
 *
 * Targets: each style ≥ 0.8× bare requests/s (memory store, 32 in flight);
 * PostgreSQL ≤ 2 statements per fresh request and 1 per replay.
 *
 * The servers run the built package (`oncely/server` from dist/, as an
 * application does): `npm run build` first when running it alone.
 *
 *   npx tsx bench/server.ts [--quick] [--rounds=N] [--requests=4000] [--json <file>]
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { emit, quick, roundsOption, type TargetCheck } from './lib/section.js';
import { countStatements } from './lib/server-statements.js';
import { fmtFixed, fmtInt, fmtRatio, fmtRatioSpread, median, rotate, table } from './lib/stats.js';

const ROUNDS = roundsOption(quick ? 2 : 7);
const REQUESTS = Number(
  process.argv.find((a) => a.startsWith('--requests='))?.slice('--requests='.length) ?? (quick ? 1_000 : 4_000),
);
const WARMUP = quick ? 300 : 2_000;
const IN_FLIGHT = 32;

const child = spawn(
  process.execPath,
  ['--import', 'tsx', fileURLToPath(new URL('./lib/server-half-child.ts', import.meta.url))],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
const ports = (JSON.parse(await nextLine()) as { ports: Record<string, number> }).ports;
async function serverCpuUs(): Promise<number> {
  const line = nextLine();
  child.stdin?.write('cpu\n');
  return (JSON.parse(await line) as { cpuUs: number }).cpuUs;
}

const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
let keys = 0;
const body = JSON.stringify({ amount: 4800, currency: 'EUR', customer: 'cus_42' });

function post(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/payments',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `k${++keys}`, 'X-Account': 'acct' },
      },
      (res) => {
        if (res.statusCode !== 201) reject(new Error(`status ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function run(port: number, requests: number): Promise<{ rps: number; cpuUs: number }> {
  let left = requests;
  const cpuBefore = await serverCpuUs();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await post(port);
    }),
  );
  const rps = (requests / (performance.now() - started)) * 1000;
  return { rps, cpuUs: ((await serverCpuUs()) - cpuBefore) / requests };
}

const names = Object.keys(ports);
for (const name of names) await run(ports[name] as number, WARMUP);
const rps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of rotate(names, round)) {
    const result = await run(ports[name] as number, REQUESTS);
    rps[name]?.push(result.rps);
    cpu[name]?.push(result.cpuUs);
  }
}
child.kill();
agent.destroy();

const ratios = (of: Record<string, number[]>, top: string, bottom: string) =>
  (of[top] ?? []).map((value, i) => value / ((of[bottom] ?? [])[i] ?? Number.NaN));
const CONTENDERS = [
  { label: 'Fetch style (`wrap`)', bare: 'fetch-bare', guarded: 'fetch-guarded' },
  {
    label: 'Connect middleware, `scopeOf` (a `Request` view)',
    bare: 'connect-bare',
    guarded: 'connect-guarded',
  },
  { label: 'Connect middleware, `nodeScopeOf`', bare: 'connect-bare', guarded: 'connect-guarded-node' },
];
const overhead = CONTENDERS.map(({ label, bare, guarded }) => {
  const r = ratios(rps, guarded, bare);
  const c = ratios(cpu, guarded, bare);
  return {
    label,
    bareRps: median(rps[bare] ?? []),
    guardedRps: median(rps[guarded] ?? []),
    ratio: median(r),
    ratios: r,
    bareCpuUs: median(cpu[bare] ?? []),
    guardedCpuUs: median(cpu[guarded] ?? []),
    cpuRatio: median(c),
  };
});
const overheadTable = table(
  [
    '',
    'bare req/s',
    'guarded req/s',
    'guarded / bare',
    'per-round ratios',
    'server CPU µs/req bare / guarded',
    'CPU ratio',
  ],
  overhead.map((o) => [
    o.label,
    fmtInt(o.bareRps),
    fmtInt(o.guardedRps),
    fmtRatio(o.ratio),
    fmtRatioSpread(o.ratios),
    `${fmtInt(o.bareCpuUs)} / ${fmtInt(o.guardedCpuUs)}`,
    fmtRatio(o.cpuRatio),
  ]),
);

const statements = await countStatements(quick ? 50 : 500);
const statementsTable =
  statements === undefined
    ? 'No PostgreSQL installed: statements not counted.'
    : table(
        [
          'mode',
          'requests',
          'guard statements / fresh request',
          'guard statements / replay',
          'all statements / fresh request',
        ],
        statements.map((s) => [
          s.mode === 'plain' ? '`wrap` (plain)' : '`withIdempotency` (transactional)',
          fmtInt(s.requests),
          fmtFixed(s.freshPerRequest),
          fmtFixed(s.replayPerRequest),
          fmtFixed(s.freshAllPerRequest),
        ]),
      );

const plain = statements?.find((s) => s.mode === 'plain');
const STYLE_NAMES = ['Fetch `wrap`', 'middleware, `scopeOf`', 'middleware, `nodeScopeOf`'];
const targets: TargetCheck[] = [
  // One check per style: each is a way in an application may take.
  ...overhead.map((o, i) => ({
    name: `oncely/server ${STYLE_NAMES[i]} ≥ 0.8× bare req/s (memory store, 32 in flight)`,
    measured: `${fmtRatio(o.ratio)} (${fmtRatioSpread(o.ratios)}); server CPU ${fmtInt(o.bareCpuUs)} → ${fmtInt(o.guardedCpuUs)} µs/request`,
    met: o.ratio >= 0.8,
  })),
  {
    name: 'oncely/server on PostgreSQL ≤ 2 statements per fresh request',
    measured: plain === undefined ? 'no PostgreSQL' : fmtFixed(plain.freshPerRequest),
    met: plain !== undefined && plain.freshPerRequest <= 2,
  },
  {
    name: 'oncely/server on PostgreSQL 1 statement per replay',
    measured: plain === undefined ? 'no PostgreSQL' : fmtFixed(plain.replayPerRequest),
    met: plain !== undefined && plain.replayPerRequest <= 1,
  },
];
const text = [
  `Overhead, ${IN_FLIGHT} in flight, ${ROUNDS} interleaved rounds × ${fmtInt(REQUESTS)} fresh requests after ${fmtInt(WARMUP)} of warm-up, the servers in their own process (node ${process.version}); medians:`,
  '',
  overheadTable,
  '',
  "PostgreSQL statements per request, counted by `pg_stat_statements` on a throwaway cluster (the guard's: those on its table):",
  '',
  statementsTable,
].join('\n');
emit({
  id: 'server',
  title: 'The server half: oncely/server overhead and statements',
  text,
  targets,
  data: { inFlight: IN_FLIGHT, rounds: ROUNDS, requests: REQUESTS, overhead, statements },
});
