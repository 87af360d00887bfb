/**
 * Resume at scale (item 4 of the benchmark issue; run with `npx tsx bench/resume-scale.ts`; not a test).
 *
 *   npx tsx bench/resume-scale.ts [--quick] [--sizes=1000,100000] [--concurrency=64] [--runs=N] [--threadpool=N] [--dir=PATH]
 *
 * --runs: runs per size (default 3; the median time per operation is kept, and every run's peak RSS);
 * --quick: a smoke run (sizes 200 and 2,000, 2 runs each), printed only: it never replaces the
 * figures of a full run in the JSON; --threadpool: UV_THREADPOOL_SIZE of the child
 * (default Node's 4); --dir: where the temp stores go (os.tmpdir()).
 *
 * For each size N: N pending operations are written into a fresh file-store
 * directory (as a process that wrote them ahead and stopped would leave
 * them: see lib/resume-fill.ts), then a FRESH Node process
 * (lib/resume-child.ts) creates a client on that store and calls `resume()`
 * once, `concurrency` at a time, against a local `node:http` server in this
 * process that answers 201 and counts requests and distinct idempotency keys.
 *
 * The child runs the BUILT package (dist/, via `oncely/node`) with plain
 * `node`, no TypeScript loader, so its memory is Node's and the SDK's: run
 * `npm run build` first (this script refuses a dist/ older than src/).
 *
 * Reported per size: wall time of `resume()` in the child, time per
 * operation after start-up ((wall − time to the first attempt) / N) and its
 * ratio to the first size, the same with start-up included (wall / N), time
 * to the first attempt (sweep, listing and ordering), RSS of the child before `resume()`
 * (Node and the modules), and peak RSS (the kernel's `maxRSS` of the
 * child; VmHWM, and RSS and heap sampled every 20 ms, are in the JSON, with a
 * timeline). Checked: `resume()` counted N operations, all succeeded, and
 * `onOutcome` was called N times; the server saw exactly N distinct keys,
 * and no key twice.
 *
 * Targets (for the largest size against the first): peak RSS ≤ 180 MB in
 * every run, and the median time per operation after start-up ≤ 1.0× that of
 * the first size. Start-up is left out of that ratio because it is paid once
 * per pass: at 1,000 operations it is a large share of the wall time, so the
 * ratio with it included is met by the start-up cost alone.
 * Figures go to `bench/resume-scale.json` (with `--json <file>`, as `npm run
 * bench` runs it: a section of bench/results.json instead). Each operation is
 * one durable write (the claim, which starts attempt 1 in the same write) and
 * its result (relaxed: it rides the next group commit), so the run is bound by the disk:
 * on a shared disk absolute times swing; the ratio is what to read.
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { fileStore } from '../src/node.js';
import type { ChildReport } from './lib/resume-child.js';
import { benchKey, fillStore } from './lib/resume-fill.js';
import { type ServerStats, startCountingServer } from './lib/resume-server.js';
import { emit } from './lib/section.js';

function option(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const QUICK = process.argv.includes('--quick');
const SIZES = (option('sizes') ?? (QUICK ? '200,2000' : '1000,100000'))
  .split(',')
  .map((s) => Number(s.replace(/_/g, '')));
const CONCURRENCY = Number(option('concurrency') ?? '64');
/** libuv thread-pool size of the child (every fsync, rename and open runs there); default: Node's own (4). */
const THREADPOOL = option('threadpool');
if (SIZES.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error('--sizes must be positive integers');
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY <= 0) throw new Error('--concurrency must be a positive integer');
const root = fs.mkdtempSync(join(option('dir') ?? tmpdir(), 'oncely-resume-'));
const childSource = fileURLToPath(new URL('./lib/resume-child.ts', import.meta.url));
const outFile = fileURLToPath(new URL('./resume-scale.json', import.meta.url));
const srcDir = fileURLToPath(new URL('../src/', import.meta.url));
const distDir = fileURLToPath(new URL('../dist/', import.meta.url));

/** Newest modification time of any file under `dir`. */
function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The child as plain JavaScript for `node`: its own code bundled, and
 * `oncely/*` left as imports of the built files in dist/ (the package as a
 * user gets it). Refuses a missing or stale build.
 */
async function bundleChild(into: string): Promise<string> {
  const entry = join(distDir, 'node.js');
  if (!fs.existsSync(entry) || fs.statSync(entry).mtimeMs < newestMtimeMs(srcDir)) {
    throw new Error('dist/ is missing or older than src/: run `npm run build` first');
  }
  const outfile = join(into, 'resume-child.mjs');
  await build({
    entryPoints: [childSource],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    plugins: [
      {
        name: 'oncely-from-dist',
        setup(b) {
          b.onResolve({ filter: /^oncely(\/|$)/ }, (args) => {
            const sub = args.path === 'oncely' ? 'index' : args.path.slice('oncely/'.length);
            return { path: pathToFileURL(join(distDir, `${sub}.js`)).href, external: true };
          });
        },
      },
    ],
  });
  return outfile;
}
let childFile = '';

/**
 * Runs per size: a small size finishes in seconds, where a noisy disk can
 * swing it by 2×, so the median time of a few is kept; the peak RSS target
 * must hold in every run, not in a lucky one.
 */
const RUNS = Number(option('runs') ?? (QUICK ? '2' : '3'));
if (!Number.isInteger(RUNS) || RUNS <= 0) throw new Error('--runs must be a positive integer');

const TARGET_RATIO = 1.0;
const TARGET_RSS_MB = 180;

interface RunResult {
  fillMs: number;
  child: ChildReport;
  server: ServerStats;
  /** Time per operation, ms (resume wall time / N). */
  msPerOp: number;
  /** Time per operation after start-up, ms ((resume wall time − time to the first attempt) / N). */
  msPerOpAfterStart: number;
  /** Records still pending or in flight afterwards (read back in this process). */
  leftOpen: number;
  problems: string[];
}

interface SizeResult {
  size: number;
  storeMB: number;
  runs: RunResult[];
  /** Median over runs of the time per operation, ms. */
  msPerOp: number;
  /** `msPerOp` over that of the first size. */
  ratio: number;
  /** Median over runs of the time per operation after start-up, ms. */
  msPerOpAfterStart: number;
  /** `msPerOpAfterStart` over that of the first size (the target). */
  ratioAfterStart: number;
  /** Highest `maxRSS` of the child over runs, MB. */
  peakRssMB: number;
  /** `maxRSS` of the child in each run, MB, in run order. */
  peakRssByRunMB: number[];
  verified: boolean;
}

function runChild(dir: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = fork(childFile, ['--dir', dir, '--concurrency', String(CONCURRENCY)], {
      // Plain node: no loader (the parent may run under tsx, whose hooks fork would inherit).
      execArgv: [],
      env: THREADPOOL === undefined ? process.env : { ...process.env, UV_THREADPOOL_SIZE: THREADPOOL },
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

async function runOnce(size: number, run: number): Promise<{ result: RunResult; bytes: number }> {
  const dir = join(root, `store-${size}-${run}`);
  const server = await startCountingServer();
  try {
    let started = performance.now();
    const bytes = await fillStore(dir, size, `${server.url}/payments`);
    const fillMs = performance.now() - started;
    started = performance.now();
    const child = await runChild(dir);
    const stats = server.stats();
    const { leftOpen, sampleBad } = await readBack(dir, size);
    const problems: string[] = [];
    if (child.summary.driven !== size)
      problems.push(`resume counted ${child.summary.driven} operations, expected ${size}`);
    if (child.summary.succeeded !== size) problems.push(`${size - child.summary.succeeded} operations did not succeed`);
    if (child.outcomesReported !== size) problems.push(`onOutcome was called ${child.outcomesReported} times`);
    if (child.ok !== size) problems.push(`onOutcome saw ${size - child.ok} outcomes without ok`);
    if (stats.effects !== size) problems.push(`server saw ${stats.effects} distinct keys, expected ${size}`);
    if (stats.repeats !== 0) problems.push(`server saw ${stats.repeats} repeated keys`);
    if (stats.unkeyed !== 0) problems.push(`server saw ${stats.unkeyed} requests without a key`);
    if (leftOpen !== 0) problems.push(`${leftOpen} records still open afterwards`);
    if (sampleBad !== 0) problems.push(`${sampleBad} sampled records not succeeded in one attempt`);
    console.error(
      `  ${size.toLocaleString('en-US')} #${run + 1}: filled in ${(fillMs / 1000).toFixed(1)} s, ` +
        `resumed in ${(child.resumeMs / 1000).toFixed(1)} s (${(child.resumeMs / size).toFixed(2)} ms/op), ` +
        `maxRSS ${child.maxRssMB} MB${problems.length > 0 ? `; PROBLEMS: ${problems.join('; ')}` : ''}`,
    );
    return {
      bytes,
      result: {
        fillMs: Math.round(fillMs),
        child,
        server: stats,
        msPerOp: child.resumeMs / size,
        msPerOpAfterStart: (child.resumeMs - (child.firstAttemptMs ?? 0)) / size,
        leftOpen,
        problems,
      },
    };
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runSize(size: number): Promise<Omit<SizeResult, 'ratio' | 'ratioAfterStart'>> {
  const runs: RunResult[] = [];
  let bytes = 0;
  for (let run = 0; run < RUNS; run++) {
    const once = await runOnce(size, run);
    runs.push(once.result);
    bytes = once.bytes;
  }
  const perOp = runs.map((r) => r.msPerOp).sort((a, b) => a - b);
  return {
    size,
    storeMB: Math.round((bytes / 2 ** 20) * 10) / 10,
    runs,
    msPerOp: perOp[Math.floor(perOp.length / 2)] ?? Number.NaN,
    msPerOpAfterStart: median(runs.map((r) => r.msPerOpAfterStart)),
    peakRssMB: Math.max(...runs.map((r) => r.child.maxRssMB)),
    peakRssByRunMB: runs.map((r) => r.child.maxRssMB),
    verified: runs.every((r) => r.problems.length === 0),
  };
}

function machine(): Record<string, unknown> {
  const list = cpus();
  return {
    node: process.version,
    os: `${platform()} ${release()}`,
    cpu: `${list[0]?.model ?? 'unknown'} × ${list.length}`,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
  };
}

const fmt = (n: number, digits = 2): string => n.toFixed(digits);
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

try {
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg().map((l) => Number(l.toFixed(2)));
  const began = performance.now();
  childFile = await bundleChild(root);
  console.error(`resume at scale: sizes ${SIZES.join(', ')}, concurrency ${CONCURRENCY}`);
  const raw: Omit<SizeResult, 'ratio' | 'ratioAfterStart'>[] = [];
  for (const size of SIZES) raw.push(await runSize(size));
  const base = raw[0]?.msPerOp ?? 1;
  const baseAfterStart = raw[0]?.msPerOpAfterStart ?? 1;
  const results: SizeResult[] = raw.map((r) => ({
    ...r,
    ratio: r.msPerOp / base,
    ratioAfterStart: r.msPerOpAfterStart / baseAfterStart,
  }));

  const first = (SIZES[0] ?? 0).toLocaleString('en-US');
  const lines = [
    `| pending ops | runs | resume wall (median) | time/op after start-up (median) | ratio vs ${first} | ` +
      `time/op, start-up included | ratio vs ${first} | first attempt after | ` +
      'RSS before resume | peak RSS (maxRSS) per run | peak heap used | verified |',
    `|${'---|'.repeat(12)}`,
  ];
  for (const r of results) {
    const children = r.runs.map((run) => run.child);
    const effects = r.runs.map((run) => run.server.effects.toLocaleString('en-US')).join(', ');
    lines.push(
      `| ${r.size.toLocaleString('en-US')} | ${r.runs.length} | ${fmt(median(children.map((c) => c.resumeMs)) / 1000, 1)} s | ` +
        `${fmt(r.msPerOpAfterStart)} ms (${r.runs.map((run) => fmt(run.msPerOpAfterStart)).join(', ')}) | ${fmt(r.ratioAfterStart)}× | ` +
        `${fmt(r.msPerOp)} ms | ${fmt(r.ratio)}× | ${fmt(median(children.map((c) => c.firstAttemptMs ?? 0)) / 1000, 1)} s | ` +
        `${fmt(median(children.map((c) => c.rssBeforeMB)), 0)} MB | ${r.peakRssByRunMB.map((mb) => fmt(mb, 0)).join(', ')} MB | ` +
        `${fmt(Math.max(...children.map((c) => c.heapPeakSampledMB)), 0)} MB | ` +
        `${r.verified ? `yes (${effects} effects)` : r.runs.flatMap((run) => run.problems).join('; ')} |`,
    );
  }
  const largest = results[results.length - 1];
  const targets =
    largest === undefined || results.length < 2
      ? []
      : [
          {
            name: `peak RSS at ${largest.size.toLocaleString('en-US')} ≤ ${TARGET_RSS_MB} MB (every one of ${largest.runs.length} runs)`,
            measured: `${largest.peakRssByRunMB.map((mb) => fmt(mb, 0)).join(', ')} MB`,
            met: largest.peakRssByRunMB.every((mb) => mb <= TARGET_RSS_MB),
            goal: 'resume' as const,
          },
          {
            name: `time per operation after start-up at ${largest.size.toLocaleString('en-US')} ≤ ${fmt(TARGET_RATIO, 1)}× of ${first}`,
            measured: `${fmt(largest.ratioAfterStart)}× (${fmt(largest.msPerOpAfterStart)} vs ${fmt(results[0]?.msPerOpAfterStart ?? Number.NaN)} ms; per run ${largest.runs.map((r) => fmt(r.msPerOpAfterStart)).join(', ')} vs ${results[0]?.runs.map((r) => fmt(r.msPerOpAfterStart)).join(', ')} ms); start-up included: ${fmt(largest.ratio)}×`,
            met: largest.ratioAfterStart <= TARGET_RATIO,
            goal: 'resume' as const,
          },
        ];
  const minutes = (performance.now() - began) / 60_000;
  console.log(`\n## Resume at scale (file store, concurrency ${CONCURRENCY})\n`);
  console.log(lines.join('\n'));
  console.log(
    `\n(whole run ${fmt(minutes, 1)} min; load average ${loadAtStart.join(' ')} → ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  );
  for (const t of targets) console.log(`${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${t.measured}`);
  const failed = results.filter((r) => !r.verified);
  if (process.argv.includes('--json')) {
    // Run by `npm run bench`: the section joins bench/results.json (and the report's targets).
    emit({
      id: 'resume-scale',
      title: `4. Resume at scale (file store, concurrency ${CONCURRENCY}, ${results.map((r) => r.runs.length).join('/')} runs per size)`,
      text: lines.join('\n'),
      targets,
      data: { concurrency: CONCURRENCY, results },
    });
  } else if (QUICK) console.error('(--quick: bench/resume-scale.json left as it was)');
  else
    fs.writeFileSync(
      outFile,
      `${JSON.stringify(
        {
          id: 'resume-scale',
          title: `Resume at scale (file store, concurrency ${CONCURRENCY})`,
          startedAt,
          minutes: Number(fmt(minutes, 1)),
          machine: {
            ...machine(),
            loadAverageAtStart: loadAtStart,
            loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))),
          },
          concurrency: CONCURRENCY,
          threadpool: THREADPOOL === undefined ? 'default' : Number(THREADPOOL),
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
