/**
 * Resume at scale (item 4 of the benchmark issue; run with `npx tsx bench/resume-scale.ts`; not a test).
 *
 *   npx tsx bench/resume-scale.ts [--sizes=1000,10000,100000] [--concurrency=64] [--dir=PATH]
 *
 * For each size N: N pending operations are written into a fresh file-store
 * directory (as a process that wrote them ahead and stopped would leave
 * them: see lib/resume-fill.ts), then a FRESH Node process
 * (lib/resume-child.ts) creates a client on that store and calls `resume()`
 * once, `concurrency` at a time, against a local `node:http` server in this
 * process that answers 201 and counts requests and distinct idempotency keys.
 *
 * Reported per size: wall time of `resume()` in the child, time per
 * operation (wall / N) and its ratio to the smallest size, time to the first
 * attempt (listing and ordering), and peak RSS (the kernel's `maxRSS` of the
 * child, and RSS sampled during the resume). Checked: every operation
 * succeeded, the server saw exactly N distinct keys, and no key twice.
 *
 * Targets: time per operation at 100k within 1.3× of 1k; peak RSS at 100k ≤ 200 MB.
 * Figures go to `bench/resume-scale.json`. Each operation is three durable
 * writes (claim, attempt started, result), so the run is bound by the disk:
 * on a shared disk absolute times swing; the ratio is what to read.
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileStore } from '../src/node.js';
import type { ChildReport } from './lib/resume-child.js';
import { benchKey, fillStore } from './lib/resume-fill.js';
import { type ServerStats, startCountingServer } from './lib/resume-server.js';

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const SIZES = (option('sizes') ?? '1000,10000,100000').split(',').map((s) => Number(s.replace(/_/g, '')));
const CONCURRENCY = Number(option('concurrency') ?? '64');
if (SIZES.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error('--sizes must be positive integers');
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY <= 0) throw new Error('--concurrency must be a positive integer');
const root = fs.mkdtempSync(join(option('dir') ?? tmpdir(), 'oncely-resume-'));
const childFile = fileURLToPath(new URL('./lib/resume-child.ts', import.meta.url));
const outFile = fileURLToPath(new URL('./resume-scale.json', import.meta.url));

const TARGET_RATIO = 1.3;
const TARGET_RSS_MB = 200;

interface SizeResult {
  size: number;
  fillMs: number;
  storeMB: number;
  child: ChildReport;
  server: ServerStats;
  /** Time per operation, ms (resume wall time / N). */
  msPerOp: number;
  /** `msPerOp` over that of the smallest size. */
  ratio: number;
  /** Records still pending or in flight afterwards (read back in this process). */
  leftOpen: number;
  verified: boolean;
  problems: string[];
}

function runChild(dir: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = fork(childFile, ['--dir', dir, '--concurrency', String(CONCURRENCY)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let report: ChildReport | undefined;
    child.on('message', (m) => {
      report = m as ChildReport;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0 && report !== undefined) resolve(report);
      else reject(new Error(`resume child exited with ${code}${report === undefined ? ' without a report' : ''}`));
    });
  });
}

/** Reads the store back: how many records are still open, and a sample of keys that must have succeeded. */
async function readBack(dir: string, size: number): Promise<{ leftOpen: number; sampleBad: number }> {
  const store = fileStore({ dir });
  try {
    const open = await store.list({ state: ['pending', 'in_flight'] });
    let sampleBad = 0;
    const step = Math.max(1, Math.floor(size / 200));
    for (let i = 0; i < size; i += step) {
      const record = await store.get(benchKey(i));
      if (record?.state !== 'succeeded' || record.attempts.length !== 1) sampleBad++;
    }
    return { leftOpen: open.length, sampleBad };
  } finally {
    await store.close();
  }
}

async function runSize(size: number): Promise<Omit<SizeResult, 'ratio'>> {
  const dir = join(root, `store-${size}`);
  const server = await startCountingServer();
  try {
    let started = performance.now();
    const bytes = await fillStore(dir, size, `${server.url}/payments`);
    const fillMs = performance.now() - started;
    console.error(`  ${size}: filled in ${(fillMs / 1000).toFixed(1)} s; resuming in a fresh process…`);
    started = performance.now();
    const child = await runChild(dir);
    const stats = server.stats();
    const { leftOpen, sampleBad } = await readBack(dir, size);
    const problems: string[] = [];
    if (child.operations !== size) problems.push(`resume returned ${child.operations} outcomes, expected ${size}`);
    if (child.ok !== size) problems.push(`${size - child.ok} operations did not succeed`);
    if (stats.effects !== size) problems.push(`server saw ${stats.effects} distinct keys, expected ${size}`);
    if (stats.repeats !== 0) problems.push(`server saw ${stats.repeats} repeated keys`);
    if (stats.unkeyed !== 0) problems.push(`server saw ${stats.unkeyed} requests without a key`);
    if (leftOpen !== 0) problems.push(`${leftOpen} records still open afterwards`);
    if (sampleBad !== 0) problems.push(`${sampleBad} sampled records not succeeded in one attempt`);
    console.error(
      `  ${size}: resumed in ${(child.resumeMs / 1000).toFixed(1)} s (child ${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
    return {
      size,
      fillMs: Math.round(fillMs),
      storeMB: Math.round((bytes / 2 ** 20) * 10) / 10,
      child,
      server: stats,
      msPerOp: child.resumeMs / size,
      leftOpen,
      verified: problems.length === 0,
      problems,
    };
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function machine(): Record<string, unknown> {
  const list = cpus();
  return {
    node: process.version,
    os: `${platform()} ${release()}`,
    cpu: `${list[0]?.model ?? 'unknown'} × ${list.length}`,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
  };
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);

try {
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  console.error(`resume at scale: sizes ${SIZES.join(', ')}, concurrency ${CONCURRENCY}`);
  const raw: Omit<SizeResult, 'ratio'>[] = [];
  for (const size of SIZES) raw.push(await runSize(size));
  const base = raw[0]?.msPerOp ?? 1;
  const results: SizeResult[] = raw.map((r) => ({ ...r, ratio: r.msPerOp / base }));

  const header =
    '| pending ops | resume wall | time/op | ratio vs ' +
    `${SIZES[0]} | first attempt after | peak RSS (maxRSS) | peak RSS sampled | peak heap | verified |`;
  const lines = [header, `|${'---|'.repeat(9)}`];
  for (const r of results) {
    lines.push(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.child.resumeMs / 1000, 1)} s | ${fmt(r.msPerOp)} ms | ` +
        `${fmt(r.ratio)}× | ${r.child.firstAttemptMs ?? '-'} ms | ${fmt(r.child.maxRssMB, 0)} MB | ` +
        `${fmt(r.child.rssPeakSampledMB, 0)} MB | ${fmt(r.child.heapPeakSampledMB, 0)} MB | ` +
        `${r.verified ? `yes (${r.server.effects.toLocaleString('en-US')} effects)` : r.problems.join('; ')} |`,
    );
  }
  const largest = results.find((r) => r.size === 100_000) ?? results[results.length - 1];
  const targets =
    largest === undefined
      ? []
      : [
          {
            name: `time per operation at ${largest.size.toLocaleString('en-US')} within ${TARGET_RATIO}× of ${SIZES[0]}`,
            measured: `${fmt(largest.ratio)}×`,
            met: largest.ratio <= TARGET_RATIO,
          },
          {
            name: `peak RSS at ${largest.size.toLocaleString('en-US')} ≤ ${TARGET_RSS_MB} MB`,
            measured: `${fmt(largest.child.maxRssMB, 0)} MB`,
            met: largest.child.maxRssMB <= TARGET_RSS_MB,
          },
        ];
  console.log(`\n## Resume at scale (file store, concurrency ${CONCURRENCY})\n`);
  console.log(lines.join('\n'));
  console.log('');
  for (const t of targets) console.log(`${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${t.measured}`);
  const failed = results.filter((r) => !r.verified);
  fs.writeFileSync(
    outFile,
    `${JSON.stringify(
      {
        id: 'resume-scale',
        title: `Resume at scale (file store, concurrency ${CONCURRENCY})`,
        startedAt,
        machine: { ...machine(), loadAverageAtStart: loadAtStart },
        concurrency: CONCURRENCY,
        text: lines.join('\n'),
        targets,
        results,
      },
      null,
      2,
    )}\n`,
  );
  if (failed.length > 0) {
    console.error(`verification failed for ${failed.map((r) => r.size).join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
