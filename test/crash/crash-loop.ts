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
 * How a child dies is drawn per cycle (`deathOf`), and no draw depends on
 * how busy the machine is:
 * - three quarters die by their own hand at a step of their first durable write
 *   (opening the store's claims, recovering a predecessor's journal, or
 *   writing ahead their first operation): killed before any write of
 *   theirs completed, on a busy machine as on an idle one;
 * - an eighth are killed at a random moment of their first `maxLifeMs`,
 *   counted from their `ready` line (loaded, about to touch the store), not
 *   from their spawn: loading Node alone takes 0.2–0.7 s on a small CI box;
 * - an eighth are killed at a random moment of the `maxLifeMs` after their
 *   first acknowledged enqueue (mid-send, mid-drain): so some operations are
 *   always acknowledged before a kill, however slowly the children run. Timed
 *   from spawn or from `ready` alone, a box with load average 10 killed
 *   every child before its first acknowledgement, and tested nothing after.
 */
import type { WriteStep } from '../../src/store/file/durable.js';
import type { ReferenceServer } from '../../src/testing.js';
import { spawnWorker, type Worker, waitForLine } from '../helpers/file-worker.js';
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

/** How one child of the loop dies (see the top). */
type Death =
  | { kind: 'write'; step: WriteStep }
  | { kind: 'loaded'; afterMs: number }
  | { kind: 'acknowledged'; afterMs: number };

/** The steps of a first durable write a child can die at (an exclusive store's writes take no record claim). */
const SHARED_STEPS: readonly WriteStep[] = ['claim-opened', 'claim-written', 'temp-written', 'durable', 'renamed'];
const EXCLUSIVE_STEPS: readonly WriteStep[] = ['claim-opened', 'claim-written'];

/** The death of cycle `cycle`: the kinds in a fixed rotation, their moments drawn from the lane's seed. */
export function deathOf(cycle: number, random: () => number, maxLifeMs: number, exclusive: boolean): Death {
  const afterMs = Math.floor(random() * maxLifeMs);
  switch (cycle % 8) {
    case 0:
      return { kind: 'loaded', afterMs };
    case 1:
      return { kind: 'acknowledged', afterMs };
    default: {
      const steps = exclusive ? EXCLUSIVE_STEPS : SHARED_STEPS;
      return { kind: 'write', step: steps[Math.floor(random() * steps.length)] ?? 'durable' };
    }
  }
}

/** Arms the parent's kill of `worker` for a timed death; returns its cancel. */
function armKill(worker: Worker, death: Death): () => void {
  let killer: NodeJS.Timeout | undefined;
  if (death.kind === 'loaded') {
    void waitForLine(worker, 'ready').then(() => {
      killer = setTimeout(() => worker.kill(), death.afterMs);
    });
  } else if (death.kind === 'acknowledged') {
    void waitForLine(worker, 'enq ').then((seen) => {
      if (seen) killer = setTimeout(() => worker.kill(), death.afterMs);
    });
  }
  return () => clearTimeout(killer);
}

async function loopLane(server: ReferenceServer, lane: Lane, options: CrashLoopOptions, report: LaneReport) {
  const maxLifeMs = options.maxLifeMs ?? 300;
  for (let cycle = 0; lane.kills < options.killsPerLane && cycle < options.killsPerLane * 2; cycle++) {
    const death = deathOf(cycle, lane.random, maxLifeMs, lane.exclusive);
    const worker = await spawnWorker({
      ...baseConfig(server, lane),
      enqueue: options.opsPerChild ?? 2,
      opPrefix: `l${lane.index}c${cycle}`,
      ...(death.kind === 'write' ? { kill: { at: 'write', step: death.step, n: 1 } } : {}),
    });
    const cancel = armKill(worker, death);
    let acknowledged = false;
    worker.onLine((line) => {
      if (line.startsWith('enq ')) acknowledged = true;
    });
    report.children++;
    watchAcknowledgements(lane, worker);
    const exit = await worker.exited;
    cancel();
    if (exit.killed) {
      lane.kills++;
      report.kills++;
      if (!acknowledged) report.killedBeforeFirstWrite++;
    } else if (exit.code === 0) {
      report.survived++;
    } else {
      report.problems.push(`lane ${lane.index} cycle ${cycle}: exit ${exit.code}: ${exit.stderr.trim()}`);
    }
    const how = death.kind === 'write' ? `at ${death.step}` : `${death.afterMs} ms after ${death.kind}`;
    options.log?.(`lane ${lane.index} cycle ${cycle} (${how}): ${exit.killed ? 'killed' : 'survived'}`);
  }
  await drainLane(server, lane, report);
}
