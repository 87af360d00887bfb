/**
 * Child process of the resume-at-scale benchmark: a fresh Node process that
 * opens the file store left by the parent, creates a client on it and calls
 * `resume()` once. It reports (over IPC) the wall time of the resume, when
 * the first attempt started (what the listing and ordering cost), the
 * summary `resume()` resolved with, and the peak RSS: the kernel's `maxRSS`
 * for the whole process, plus RSS and heap sampled every 20 ms during the
 * resume.
 *
 * It imports the built package (`oncely/node` → dist/), and the parent runs
 * it with plain `node` (bundled by esbuild into its temp directory), so the
 * RSS is the SDK's and Node's, not a TypeScript loader's.
 *
 *   node <bundled child>.mjs --dir <store> --concurrency 64
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createClient, fileStore, type ResumeSummary } from 'oncely/node';

export interface ChildReport {
  /** What `resume()` resolved with. */
  summary: ResumeSummary;
  /** Calls of `onOutcome` (it counts and keeps nothing). */
  outcomesReported: number;
  /** Of those, outcomes with `ok`. */
  ok: number;
  resumeMs: number;
  /** From calling `resume()` to the first attempt recorded as started. */
  firstAttemptMs: number | undefined;
  attemptsStarted: number;
  /** RSS before `resume()` was called (client created, store opened), MB. */
  rssBeforeMB: number;
  /** Highest sampled RSS during the resume, MB. */
  rssPeakSampledMB: number;
  /** Highest sampled heapUsed during the resume, MB. */
  heapPeakSampledMB: number;
  /** `process.resourceUsage().maxRSS` at the end (the kernel's peak for the whole process), MB. */
  maxRssMB: number;
  /** VmHWM of /proc/self/status at the end (the same peak, as Linux reports it), MB; undefined elsewhere. */
  vmHwmMB: number | undefined;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** [seconds since resume() was called, RSS MB, heapUsed MB, attempts started], at most ~40 points. */
  timeline: [number, number, number, number][];
}

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
  },
});
if (values.dir === undefined) throw new Error('--dir is required');

const MB = 2 ** 20;

/** Peak resident set size as Linux's /proc reports it (kB there), MB. */
function vmHwmMB(): number | undefined {
  try {
    const kB = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kB === undefined ? undefined : round1(Number(kB) / 1024);
  } catch {
    return undefined;
  }
}
const round1 = (n: number): number => Math.round(n * 10) / 10;

const store = fileStore({ dir: values.dir });
const client = createClient({ store, concurrency: Number(values.concurrency), owner: 'resume-bench' });
let attemptsStarted = 0;
let firstAttemptAt: number | undefined;
client.on('attempt:started', () => {
  attemptsStarted++;
  firstAttemptAt ??= performance.now();
});

let rssPeak = 0;
let heapPeak = 0;
let started = performance.now();
const timeline: [number, number, number, number][] = [];
let lastPoint = Number.NEGATIVE_INFINITY;
const sample = (): void => {
  const usage = process.memoryUsage();
  rssPeak = Math.max(rssPeak, usage.rss);
  heapPeak = Math.max(heapPeak, usage.heapUsed);
  const at = performance.now() - started;
  if (at - lastPoint >= 1_000) {
    lastPoint = at;
    timeline.push([round1(at / 1000), round1(usage.rss / MB), round1(usage.heapUsed / MB), attemptsStarted]);
  }
};
sample();
const rssBefore = process.memoryUsage().rss;
const sampler = setInterval(sample, 20);
const cpuBefore = process.cpuUsage();
started = performance.now();
let outcomesReported = 0;
let ok = 0;
const summary = await client.resume({
  onOutcome: (outcome) => {
    outcomesReported++;
    if (outcome.ok) ok++;
  },
});
const resumeMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
sample();
clearInterval(sampler);

const report: ChildReport = {
  summary,
  outcomesReported,
  ok,
  resumeMs: Math.round(resumeMs),
  firstAttemptMs: firstAttemptAt === undefined ? undefined : Math.round(firstAttemptAt - started),
  attemptsStarted,
  rssBeforeMB: round1(rssBefore / MB),
  rssPeakSampledMB: round1(rssPeak / MB),
  heapPeakSampledMB: round1(heapPeak / MB),
  maxRssMB: round1(process.resourceUsage().maxRSS / 1024),
  vmHwmMB: vmHwmMB(),
  cpuUserMs: Math.round(cpu.user / 1000),
  cpuSystemMs: Math.round(cpu.system / 1000),
  timeline: timeline.filter((_, i) => i % Math.ceil(timeline.length / 40) === 0),
};
await client.close();
await store.close();
process.send?.(report);
process.disconnect?.();
