/**
 * A crash-looping worker: child processes that each die by SIGKILL within
 * `maxLifeMs` (300 ms by default) of their start, over and over, while the
 * previous ones' leftovers pile up (claims, journals, half-written records,
 * operations in flight), then one process that lives long enough to drain
 * everything. Children die while opening the store, while recovering a
 * predecessor's journal, while writing ahead or sending: a process must
 * make progress from its first store call on, however short its life.
 * Used by crash-loop.test.ts and `scripts/soak.ts`.
 *
 * A life is counted from the child's `ready` line (loaded, about to touch
 * the store), not from its spawn: loading Node and the bundled worker alone
 * takes 0.2–0.7 s on a small CI box, and a child killed before that has
 * touched nothing, so it would test nothing.
 */
import type { ReferenceServer } from '../../src/testing.js';
import { spawnWorker, waitForLine } from '../helpers/file-worker.js';
import {
  baseConfig,
  drainLane,
  type Lane,
  type LaneReport,
  makeLanes,
  newLaneReport,
  removeLanes,
  verifyLane,
  watchAcknowledgements,
} from './lanes.js';

export interface CrashLoopOptions {
  /** Lanes run in parallel, each on its own store directory. @default 4 */
  lanes?: number;
  /** Kills to reach in each lane. */
  killsPerLane: number;
  /** New operations each child enqueues (if it lives long enough). @default 2 */
  opsPerChild?: number;
  /** Each child is killed at a random moment before this, counted from its `ready` line. @default 300 */
  maxLifeMs?: number;
  /** Seed of the lifetimes (timing still varies). @default random */
  seed?: number;
  /** Progress output. */
  log?: (line: string) => void;
  /** Children open their store `exclusive`. @default false */
  exclusive?: boolean;
}

export async function runCrashLoop(server: ReferenceServer, options: CrashLoopOptions): Promise<LaneReport> {
  const started = Date.now();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const report = newLaneReport(seed);
  const lanes = makeLanes(options.lanes ?? 4, seed, options.exclusive ? 'loop-x' : 'loop', options.exclusive);
  try {
    await Promise.all(lanes.map((lane) => loopLane(server, lane, options, report)));
    for (const lane of lanes) await verifyLane(server, lane, report);
  } finally {
    removeLanes(lanes);
  }
  report.durationMs = Date.now() - started;
  return report;
}

async function loopLane(server: ReferenceServer, lane: Lane, options: CrashLoopOptions, report: LaneReport) {
  const maxLifeMs = options.maxLifeMs ?? 300;
  for (let cycle = 0; lane.kills < options.killsPerLane && cycle < options.killsPerLane * 2; cycle++) {
    const lifeMs = Math.floor(lane.random() * maxLifeMs);
    const worker = await spawnWorker({
      ...baseConfig(server, lane),
      enqueue: options.opsPerChild ?? 2,
      opPrefix: `l${lane.index}c${cycle}`,
    });
    let killer: NodeJS.Timeout | undefined;
    void waitForLine(worker, 'ready').then(() => {
      killer = setTimeout(() => worker.kill(), lifeMs);
    });
    report.children++;
    watchAcknowledgements(lane, worker);
    const exit = await worker.exited;
    clearTimeout(killer);
    if (exit.killed) {
      lane.kills++;
      report.kills++;
    } else if (exit.code === 0) {
      report.survived++;
    } else {
      report.problems.push(`lane ${lane.index} cycle ${cycle}: exit ${exit.code}: ${exit.stderr.trim()}`);
    }
    options.log?.(`lane ${lane.index} cycle ${cycle} (life ${lifeMs} ms): ${exit.killed ? 'killed' : 'survived'}`);
  }
  await drainLane(server, lane, report);
}
