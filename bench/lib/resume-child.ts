/**
 * Child process of the resume-at-scale benchmark: a fresh Node process that
 * opens the file store left by the parent, creates a client on it and calls
 * `resume()` once. It reports (over IPC) the wall time of the resume, when
 * the first attempt started (what the listing and ordering cost), the
 * outcomes, and the peak RSS: the kernel's `maxRSS` for the whole process,
 * plus RSS and heap sampled every 20 ms during the resume.
 *
 *   node --import tsx bench/lib/resume-child.ts --dir <store> --concurrency 64
 */
import { parseArgs } from 'node:util';
import { createClient, fileStore } from '../../src/node.js';

export interface ChildReport {
  operations: number;
  ok: number;
  states: Record<string, number>;
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
const outcomes = await client.resume();
const resumeMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
sample();
clearInterval(sampler);

const states: Record<string, number> = {};
let ok = 0;
for (const outcome of outcomes) {
  states[outcome.state] = (states[outcome.state] ?? 0) + 1;
  if (outcome.ok) ok++;
}
const report: ChildReport = {
  operations: outcomes.length,
  ok,
  states,
  resumeMs: Math.round(resumeMs),
  firstAttemptMs: firstAttemptAt === undefined ? undefined : Math.round(firstAttemptAt - started),
  attemptsStarted,
  rssBeforeMB: round1(rssBefore / MB),
  rssPeakSampledMB: round1(rssPeak / MB),
  heapPeakSampledMB: round1(heapPeak / MB),
  maxRssMB: round1(process.resourceUsage().maxRSS / 1024),
  cpuUserMs: Math.round(cpu.user / 1000),
  cpuSystemMs: Math.round(cpu.system / 1000),
  timeline: timeline.filter((_, i) => i % Math.ceil(timeline.length / 40) === 0),
};
await client.close();
await store.close();
process.send?.(report);
process.disconnect?.();
