/**
 * `npm run bench`: runs every benchmark, each in its own Node process (a
 * clean heap and JIT; the memory benchmark needs `--expose-gc`), prints one
 * report with the five targets of the performance work met or missed and,
 * after a full run (not --quick, not --only), writes `bench/results.json` and
 * rewrites the generated blocks of README.md and BENCHMARKS.md from it
 * (scripts/figures.ts).
 *
 *   npm run bench                      # everything (~25 minutes on an idle 2-core machine)
 *   npm run bench -- --only=outage     # some: overhead, outage, bundle, memory, refused, fleet, server, resume-scale, file-store…
 *   npm run bench -- --quick           # a short smoke run; numbers are not meaningful
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchResults, benchmarksReport, refreshDocuments } from '../scripts/figures.js';
import type { Section } from './lib/section.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));

interface Benchmark {
  id: string;
  file: string;
  nodeFlags: string[];
  /** Writes a `Section` to `--json <file>`; otherwise its stdout is kept as the section's text. */
  writesSection: boolean;
}

const BENCHMARKS: Benchmark[] = [
  { id: 'overhead', file: 'overhead.ts', nodeFlags: [], writesSection: true },
  { id: 'outage', file: 'outage.ts', nodeFlags: [], writesSection: true },
  { id: 'bundle', file: 'bundle.ts', nodeFlags: [], writesSection: true },
  { id: 'memory', file: 'memory.ts', nodeFlags: ['--expose-gc'], writesSection: true },
  // Issue 34: what instrument(client) from oncely/opentelemetry costs per request.
  { id: 'opentelemetry', file: 'opentelemetry.ts', nodeFlags: [], writesSection: true },
  // Items 2 and 4 of the benchmark issue (file store) belong to the file-store
  // work: every `bench/file-store*.ts` is run here too, with its own defaults,
  // and its output is included as printed. (To join the targets table, accept
  // `--json <file>` and write a `Section` with `emit()` from bench/lib/section.ts.)
  ...readdirSync(here)
    .filter((f) => /^file-store.*\.ts$/.test(f))
    .sort()
    .map((f) => ({ id: f.replace(/(\.bench)?\.ts$/, ''), file: f, nodeFlags: ['--expose-gc'], writesSection: false })),
  // Issue 32, item 3: a Node queue noticing that a refusing host is back (file and memory stores).
  { id: 'refused', file: 'refused.ts', nodeFlags: [], writesSection: true },
  // Issue 29: PostgreSQL workers (1, 2, 4, 8 processes) draining one table; starts its own cluster.
  { id: 'fleet', file: 'fleet.ts', nodeFlags: [], writesSection: true },
  // Issue 30: oncely/server's overhead (its servers in their own process) and statements per request on PostgreSQL.
  { id: 'server', file: 'server.ts', nodeFlags: [], writesSection: true },
  // The longest (3 runs of 100,000 operations; it runs the built package: `npm run bench` builds first).
  { id: 'resume-scale', file: 'resume-scale.ts', nodeFlags: [], writesSection: true },
];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');

/** Runs one benchmark in its own process; resolves with its stdout when it does not write a section. */
function runOne(bench: Benchmark, out: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const extra = bench.writesSection ? ['--json', out, ...(quick ? ['--quick'] : [])] : [];
    const child = spawn(process.execPath, [...bench.nodeFlags, '--import', 'tsx', join(here, bench.file), ...extra], {
      cwd: root,
      stdio: ['ignore', bench.writesSection ? 'inherit' : 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${bench.file} exited with ${code}`))));
  });
}

function machine(): BenchResults['machine'] {
  const cpuList = cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    undici: process.versions.undici ?? 'unknown',
    os: `${platform()} ${release()}`,
    cpu: `${cpuList[0]?.model ?? 'unknown'} × ${cpuList.length}`,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    loadAverageAtEnd: [],
  };
}

async function main(): Promise<void> {
  // A quick smoke run leaves out the file-store benchmarks (they have no quick mode) unless named.
  const chosen =
    only === undefined
      ? BENCHMARKS.filter((b) => b.writesSection || !quick)
      : BENCHMARKS.filter((b) => only.includes(b.id));
  const started = new Date();
  const host = machine();
  const work = mkdtempSync(join(tmpdir(), 'oncely-bench-run-'));
  const sections: Section[] = [];
  try {
    for (const bench of chosen) {
      const t0 = performance.now();
      console.error(`[bench] ${bench.id} …`);
      const out = join(work, `${bench.id}.json`);
      const printed = await runOne(bench, out);
      sections.push(
        bench.writesSection
          ? (JSON.parse(readFileSync(out, 'utf8')) as Section)
          : {
              id: bench.id,
              title: `File store: bench/${bench.file} (its own report, as printed)`,
              text: ['```', printed.trim(), '```'].join('\n'),
              targets: [],
              data: { stdout: printed },
            },
      );
      console.error(`[bench] ${bench.id} done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const minutes = (Date.now() - started.getTime()) / 60_000;
  const results: BenchResults = {
    date: started.toISOString(),
    quick,
    minutes,
    machine: { ...host, loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))) },
    sections,
  };
  console.log(`\n${benchmarksReport(results)}\n`);
  // Only a full run stands for the project: it replaces bench/results.json and
  // the figures in README.md and BENCHMARKS.md. A quick or partial run is
  // printed only, so it can never leave the documents out of step.
  if (!quick && only === undefined) {
    writeFileSync(join(here, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    refreshDocuments(root);
  } else {
    console.error('[bench] a --quick or --only run: bench/results.json and the documents are left as they were');
  }
}

await main();
