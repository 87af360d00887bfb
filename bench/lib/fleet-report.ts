/**
 * The fleet benchmark's figures: per-round measurements summarised per fleet
 * size (medians over rounds; oncely's ratio to graphile-worker is the median
 * of the per-round ratios), the tables, and the targets of issue 29.
 */
import type { StatementCount } from './fleet-db.js';
import type { Section, TargetCheck } from './section.js';
import { fmtFixed, fmtInt, fmtRatio, fmtRatioSpread, median, quantile, table } from './stats.js';

/**
 * graphile-worker's task sends with `fetch`, as a graphile-worker user would
 * write it (the contender of issue 29, whom the targets are against); its
 * `node:http` twin sends with node:http's global agent, as oncely/node does,
 * so the queue's cost reads apart from the HTTP client's.
 */
export type ContenderName = 'oncely' | 'graphile-worker' | 'graphile-worker (node:http)';

/** One contender's drain of one round. */
export interface ContenderRound {
  contender: ContenderName;
  round: number;
  opsPerSec: number;
  /** Every statement the database ran during the drain (pg_stat_statements), per operation. */
  statementsPerOp: number;
  /** Claim statements per operation. */
  claimsPerOp: number;
  /** The claim statement's mean execution time inside the database (pg_stat_statements), ms. */
  claimDbMeanMs: number;
  /** Each claim statement's round trip as the worker saw it, ms. */
  claimMs: number[];
  /** Each whole claim call (oncely's `claimDue`), ms; empty for graphile-worker. */
  claimCallMs: number[];
  workerCpuPerOp: number;
  dbCpuPerOp: number;
  apiCpuPerOp: number;
  /** Keys the API has seen more than once, since the start of the run. */
  sentTwice: number;
  topStatements: StatementCount[];
}

export interface ContenderSummary {
  opsPerSec: number;
  statementsPerOp: number;
  claimsPerOp: number;
  claimDbMeanMs: number;
  claimP50: number;
  claimP99: number;
  claimCallP50: number;
  claimCallP99: number;
  workerCpuPerOp: number;
  dbCpuPerOp: number;
  apiCpuPerOp: number;
  sentTwice: number;
  /** The statements of the last round, most called first, with calls per operation. */
  topStatements: StatementCount[];
}

export interface FleetRow {
  workers: number;
  oncely: ContenderSummary;
  graphile: ContenderSummary;
  /** The same task sending with node:http (absent from runs before it was measured). */
  graphileNodeHttp?: ContenderSummary | undefined;
  /** oncely ops/s ÷ graphile-worker jobs/s, the median of the rounds' ratios. */
  ratio: number;
  ratios: number[];
  /** oncely ops/s ÷ the node:http task's jobs/s, likewise. */
  ratioNodeHttp?: number | undefined;
  ratiosNodeHttp?: number[] | undefined;
}

function summary(rounds: ContenderRound[], ops: (r: ContenderRound) => number = (r) => r.opsPerSec): ContenderSummary {
  const pick = (f: (r: ContenderRound) => number) => median(rounds.map(f));
  const claims = rounds.flatMap((r) => r.claimMs);
  const calls = rounds.flatMap((r) => r.claimCallMs);
  return {
    opsPerSec: pick(ops),
    statementsPerOp: pick((r) => r.statementsPerOp),
    claimsPerOp: pick((r) => r.claimsPerOp),
    claimDbMeanMs: pick((r) => r.claimDbMeanMs),
    claimP50: quantile(claims, 0.5),
    claimP99: quantile(claims, 0.99),
    claimCallP50: quantile(calls, 0.5),
    claimCallP99: quantile(calls, 0.99),
    workerCpuPerOp: pick((r) => r.workerCpuPerOp),
    dbCpuPerOp: pick((r) => r.dbCpuPerOp),
    apiCpuPerOp: pick((r) => r.apiCpuPerOp),
    sentTwice: Math.max(0, ...rounds.map((r) => r.sentTwice)),
    topStatements: rounds.at(-1)?.topStatements ?? [],
  };
}

export function summarise(workers: number, rounds: ContenderRound[]): FleetRow {
  const of = (name: ContenderName) => rounds.filter((r) => r.contender === name);
  const oncely = of('oncely');
  const ratiosTo = (other: ContenderRound[]) =>
    oncely.map((o) => o.opsPerSec / (other.find((g) => g.round === o.round)?.opsPerSec ?? Number.NaN));
  const graphile = of('graphile-worker');
  const nodeHttp = of('graphile-worker (node:http)');
  const ratios = ratiosTo(graphile);
  const row: FleetRow = {
    workers,
    oncely: summary(oncely),
    graphile: summary(graphile),
    ratio: median(ratios),
    ratios,
  };
  if (nodeHttp.length === 0) return row;
  const ratiosNodeHttp = ratiosTo(nodeHttp);
  return { ...row, graphileNodeHttp: summary(nodeHttp), ratioNodeHttp: median(ratiosNodeHttp), ratiosNodeHttp };
}

export interface FleetSetup {
  ops: number;
  rounds: number;
  warmup: number;
  latencyMs: number;
  concurrency: number;
}

const ms = (value: number) => fmtFixed(value, 1);
/** Keys the API saw more than once, from any contender. */
const sentTwice = (r: FleetRow) =>
  Math.max(r.oncely.sentTwice, r.graphile.sentTwice, r.graphileNodeHttp?.sentTwice ?? 0);
const cpu = (s: ContenderSummary) =>
  `${fmtFixed(s.workerCpuPerOp)} · ${fmtFixed(s.dbCpuPerOp)} · ${fmtFixed(s.apiCpuPerOp)}`;

export function fleetSection(
  rows: FleetRow[],
  memory: { opsPerSec: number; cpuPerOp: number },
  setup: FleetSetup,
  startedAt: string = new Date().toISOString(),
): Section {
  const main = table(
    [
      'workers',
      'oncely ops/s',
      'graphile-worker jobs/s',
      'oncely ÷ graphile-worker',
      'graphile-worker, node:http task, jobs/s',
      'oncely ÷ that',
      'statements/op oncely · gw',
    ],
    [
      ...rows.map((r) => [
        `${r.workers}`,
        fmtInt(r.oncely.opsPerSec),
        fmtInt(r.graphile.opsPerSec),
        `${fmtRatio(r.ratio)} (${fmtRatioSpread(r.ratios)})`,
        r.graphileNodeHttp === undefined ? '–' : fmtInt(r.graphileNodeHttp.opsPerSec),
        r.ratiosNodeHttp === undefined
          ? '–'
          : `${fmtRatio(r.ratioNodeHttp ?? Number.NaN)} (${fmtRatioSpread(r.ratiosNodeHttp)})`,
        `${fmtFixed(r.oncely.statementsPerOp)} · ${fmtFixed(r.graphile.statementsPerOp)}`,
      ]),
      ['memory store, 1 process', fmtInt(memory.opsPerSec), '', '', '', '', '–'],
    ],
  );
  const claims = table(
    [
      'workers',
      'oncely claim statement p50 / p99',
      'oncely whole claim call p50 / p99',
      'in the database (mean)',
      'claims/op',
      'graphile-worker get_job p50 / p99',
      'in the database (mean)',
      'claims/op',
    ],
    rows.map((r) => [
      `${r.workers}`,
      `${ms(r.oncely.claimP50)} / ${ms(r.oncely.claimP99)} ms`,
      `${ms(r.oncely.claimCallP50)} / ${ms(r.oncely.claimCallP99)} ms`,
      `${fmtFixed(r.oncely.claimDbMeanMs, 2)} ms`,
      fmtFixed(r.oncely.claimsPerOp),
      `${ms(r.graphile.claimP50)} / ${ms(r.graphile.claimP99)} ms`,
      `${fmtFixed(r.graphile.claimDbMeanMs, 2)} ms`,
      fmtFixed(r.graphile.claimsPerOp),
    ]),
  );
  const cpuTable = table(
    [
      'workers',
      'CPU ms/op oncely: workers · db · API',
      'graphile-worker: workers · db · API',
      'node:http task: workers · db · API',
      'sent twice',
    ],
    [
      ...rows.map((r) => [
        `${r.workers}`,
        cpu(r.oncely),
        cpu(r.graphile),
        r.graphileNodeHttp === undefined ? '–' : cpu(r.graphileNodeHttp),
        `${sentTwice(r)}`,
      ]),
      ['memory store, 1 process', `${fmtFixed(memory.cpuPerOp)} (client)`, '', '', '–'],
    ],
  );
  const text = [
    `Run ${startedAt}. ${setup.ops} operations per round and contender, ${setup.rounds} round(s) after a ${setup.warmup}-operation warm-up each; API answering in ${setup.latencyMs} ms; concurrency ${setup.concurrency} per worker process; graphile-worker 0.17.3 (runOnce, default settings), its task sending with \`fetch\` (the contender the targets are against) and, as a second contender, with node:http's global agent (as oncely/node sends): the queue's cost apart from the HTTP client's; medians.`,
    '',
    main,
    '',
    'Claims: the statement round trip as the worker saw it; oncely also the whole claim call (a pooled connection, the statement, each row checked); the database side from pg_stat_statements.',
    '',
    claims,
    '',
    cpuTable,
  ].join('\n');
  return {
    id: 'fleet',
    title: 'Fleet: PostgreSQL workers draining one table',
    text,
    targets: targets(rows),
    data: { setup, rows, memory },
  };
}

function targets(rows: FleetRow[]): TargetCheck[] {
  const at = (n: number) => rows.find((r) => r.workers === n);
  const sizes = rows.map((r) => r.workers);
  const perOp = rows.map((r) => r.oncely.statementsPerOp);
  return [
    ...sizes.map((n) => ({
      name: `oncely throughput ≥ 0.9× graphile-worker's at ${n} process(es)`,
      measured: fmtRatio(at(n)?.ratio ?? Number.NaN),
      met: (at(n)?.ratio ?? 0) >= 0.9,
    })),
    {
      name: 'stretch: oncely throughput ≥ 1.0× graphile-worker at every fleet size',
      measured: rows.map((r) => `${r.workers}: ${fmtRatio(r.ratio)}`).join(', '),
      met: rows.length > 0 && rows.every((r) => r.ratio >= 1),
    },
    ...sizes.map((n) => ({
      name: `statements per operation ≤ 3 at ${n} worker(s)`,
      measured: fmtFixed(at(n)?.oncely.statementsPerOp ?? Number.NaN),
      met: (at(n)?.oncely.statementsPerOp ?? Number.POSITIVE_INFINITY) <= 3,
    })),
    {
      name: 'statements per operation flat in the fleet size (largest ≤ 1.25× smallest)',
      measured: perOp.map((v) => fmtFixed(v)).join(' / '),
      met: perOp.length > 0 && Math.max(...perOp) <= 1.25 * Math.min(...perOp),
    },
    ...[1, 2]
      .filter((n) => sizes.includes(n))
      .map((n) => ({
        name: `claim statement p50 ≤ 5 ms at ${n} worker(s)`,
        measured: `${ms(at(n)?.oncely.claimP50 ?? Number.NaN)} ms (whole claim call ${ms(at(n)?.oncely.claimCallP50 ?? Number.NaN)} ms)`,
        met: (at(n)?.oncely.claimP50 ?? Number.POSITIVE_INFINITY) <= 5,
      })),
    {
      name: 'no operation sent twice by either fleet',
      measured: `${Math.max(0, ...rows.map(sentTwice))} keys`,
      met: rows.every((r) => sentTwice(r) === 0),
    },
  ];
}
