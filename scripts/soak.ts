/**
 * Crash soak: the crash test at scale (1,000+ SIGKILLs by default).
 *
 *   npx tsx scripts/soak.ts [--kills 1000] [--lanes 4] [--ops 3] [--seed N] [--verbose]
 *
 * Starts a reference server in this process (its ledger survives every
 * child), runs the crash harness of test/crash, prints the figures and
 * exits 1 if any guarantee broke (a lost or doubled operation, a key change,
 * a quarantine, crash debris left behind).
 */
import { parseArgs } from 'node:util';
import { startReferenceServer } from '../src/testing.js';
import { runCrashLanes } from '../test/crash/harness.js';
import { disposeWorkerBuild } from '../test/helpers/file-worker.js';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '1000' },
    lanes: { type: 'string', default: '4' },
    ops: { type: 'string', default: '3' },
    seed: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});

const lanes = Math.max(1, Number(values.lanes));
const kills = Math.max(1, Number(values.kills));
const server = await startReferenceServer();
try {
  const report = await runCrashLanes(server, {
    lanes,
    killsPerLane: Math.ceil(kills / lanes),
    opsPerChild: Math.max(1, Number(values.ops)),
    ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
    ...(values.verbose ? { log: (line: string) => console.log(line) } : {}),
  });
  const { problems, ...figures } = report;
  console.log(JSON.stringify(figures, null, 2));
  if (problems.length > 0) {
    console.error(`${problems.length} problem(s):`);
    for (const p of problems.slice(0, 50)) console.error(`  ${p}`);
    process.exitCode = 1;
  } else {
    console.log(`ok: ${report.kills} kills, ${report.operations} operations, each with exactly one effect`);
  }
} finally {
  await server.close();
  disposeWorkerBuild();
}
