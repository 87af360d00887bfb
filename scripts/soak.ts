/**
 * Crash soak: the crash tests at scale. First 1,000+ SIGKILLs at chosen
 * moments (test/crash/harness.ts), then a crash loop of 1,000+ processes
 * each killed within 300 ms of loading (test/crash/crash-loop.ts; the normal
 * suite runs only 40 of those).
 *
 *   npx tsx scripts/soak.ts [--kills 1000] [--loop-kills 1000] [--lanes 4] [--ops 3] [--seed N] [--verbose]
 *
 * `--kills 0` or `--loop-kills 0` skips that part. Starts a reference server
 * in this process (its ledger survives every child), prints the figures and
 * exits 1 if any guarantee broke (a lost or doubled operation, a key change,
 * a quarantine, crash debris left behind).
 */
import { parseArgs } from 'node:util';
import { startReferenceServer } from '../src/testing.js';
import { runCrashLoop } from '../test/crash/crash-loop.js';
import { runCrashLanes } from '../test/crash/harness.js';
import type { LaneReport } from '../test/crash/lanes.js';
import { disposeWorkerBuild } from '../test/helpers/file-worker.js';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '1000' },
    'loop-kills': { type: 'string', default: '1000' },
    lanes: { type: 'string', default: '4' },
    ops: { type: 'string', default: '3' },
    seed: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});

const lanes = Math.max(1, Number(values.lanes));
const kills = Math.max(0, Number(values.kills));
const loopKills = Math.max(0, Number(values['loop-kills']));
const common = {
  lanes,
  ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
  ...(values.verbose ? { log: (line: string) => console.log(line) } : {}),
};

/** Prints a part's figures and problems; false when a guarantee broke. */
function summarize(name: string, report: LaneReport): boolean {
  const { problems, ...figures } = report;
  console.log(`${name}: ${JSON.stringify(figures, null, 2)}`);
  if (problems.length === 0) {
    console.log(`ok: ${report.kills} kills, ${report.operations} operations, each with exactly one effect`);
    return true;
  }
  console.error(`${problems.length} problem(s):`);
  for (const p of problems.slice(0, 50)) console.error(`  ${p}`);
  return false;
}

const server = await startReferenceServer();
try {
  let ok = true;
  if (kills > 0) {
    const opsPerChild = Math.max(1, Number(values.ops));
    const report = await runCrashLanes(server, { ...common, killsPerLane: Math.ceil(kills / lanes), opsPerChild });
    ok = summarize('kills at chosen moments', report) && ok;
  }
  if (loopKills > 0) {
    const report = await runCrashLoop(server, { ...common, killsPerLane: Math.ceil(loopKills / lanes) });
    ok = summarize('crash loop', report) && ok;
  }
  if (!ok) process.exitCode = 1;
} finally {
  await server.close();
  disposeWorkerBuild();
}
