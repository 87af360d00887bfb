/**
 * The crash harness shared by the crash test (200+ kills) and
 * `scripts/soak.ts` (1,000+): child processes using the file store send
 * operations to a reference server owned by the caller (so its ledger
 * survives every child), and die by SIGKILL at chosen moments; the next
 * child resumes what they left. Each lane has its own store directory and
 * request path (so server faults target one lane), and lanes run in parallel.
 *
 * Kill moments (one per child, picked at random):
 * - `before-send`: the attempt is recorded as started, the request not sent;
 * - `mid-request`: the server delays the request before committing; the
 *   child dies while it waits (the effect then happens with nobody listening);
 * - `after-commit`: the server committed and holds the response; the parent
 *   kills the child, then lets the response go to a dead socket;
 * - `lost-response`: the server commits and drops the response; the child
 *   dies while it waits for its timeout, or while retrying;
 * - `mid-write`: the child dies inside a durable write of a record (temp
 *   written, temp synced, renamed, directory synced);
 * - `timer`: the parent kills the child at a random time.
 * After some kills the parent also plants a torn temp file in the dead
 * child's name, as a power cut mid-write would leave: it must be ignored and
 * cleaned up, never quarantined.
 *
 * After the last kill a final child drains the lane; then the lane is checked.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { WriteStep } from '../../src/store/file/durable.js';
import type { Hold, ReferenceServer } from '../../src/testing.js';
import { beforeBoot } from '../helpers/file-store.js';
import { spawnWorker, waitForLine } from '../helpers/file-worker.js';
import { testMachine } from '../helpers/machine.js';
import {
  baseConfig,
  drainLane,
  type Lane,
  type LaneReport,
  makeLanes,
  newLaneReport,
  removeLanes,
  verifyLane,
  WORKER_TIMEOUT_MS,
  watchAcknowledgements,
} from './lanes.js';
import type { KillPlan, WorkerConfig } from './worker.js';

export const KILL_MOMENTS = [
  'before-send',
  'mid-request',
  'after-commit',
  'lost-response',
  'mid-write',
  'timer',
] as const;
export type KillMoment = (typeof KILL_MOMENTS)[number];

export interface CrashOptions {
  /** Lanes run in parallel, each on its own store directory. @default 4 */
  lanes?: number;
  /** Kills to reach in each lane. */
  killsPerLane: number;
  /** New operations each child enqueues. @default 3 */
  opsPerChild?: number;
  /** Seed of the kill plan choices (timing still varies). @default random */
  seed?: number;
  /** Progress output. */
  log?: (line: string) => void;
}

export interface CrashReport extends LaneReport {
  killsByMoment: Record<KillMoment, number>;
  tornTempFiles: number;
}

/** Every step of a durable write, the two steps of taking a claim included (claim.md). */
const STEPS: WriteStep[] = ['claim-opened', 'claim-written', 'temp-written', 'durable', 'renamed'];

export async function runCrashLanes(server: ReferenceServer, options: CrashOptions): Promise<CrashReport> {
  const started = Date.now();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const report: CrashReport = {
    ...newLaneReport(seed),
    killsByMoment: Object.fromEntries(KILL_MOMENTS.map((m) => [m, 0])) as Record<KillMoment, number>,
    tornTempFiles: 0,
  };
  // Kill plans are reproducible from the seed (timing still varies).
  const lanes = makeLanes(options.lanes ?? 4, seed, 'lane');
  try {
    await Promise.all(lanes.map((lane) => runLane(server, lane, options, report)));
    for (const lane of lanes) await verifyLane(server, lane, report);
  } finally {
    removeLanes(lanes);
  }
  report.durationMs = Date.now() - started;
  return report;
}

async function runLane(server: ReferenceServer, lane: Lane, options: CrashOptions, report: CrashReport): Promise<void> {
  const { random, path } = lane;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const between = (min: number, max: number): number => Math.floor(min + random() * (max - min));
  const maxCycles = options.killsPerLane * 3;
  for (let cycle = 0; lane.kills < options.killsPerLane && cycle < maxCycles; cycle++) {
    const moment = pick(KILL_MOMENTS);
    let kill: KillPlan | undefined;
    let hold: Hold | undefined;
    let timerMs: number | undefined;
    switch (moment) {
      case 'before-send':
        kill = { at: 'attempt', n: between(1, 4) };
        break;
      case 'mid-request':
        server.script({ kind: 'delay', ms: between(200, 400), match: { path } });
        kill = { at: 'attempt', n: 1, afterMs: between(5, 120) };
        break;
      case 'after-commit':
        hold = server.hold({ path });
        break;
      case 'lost-response':
        server.script({ kind: 'drop-after-commit', match: { path } });
        kill = { at: 'attempt', n: 1, afterMs: between(20, 800) };
        break;
      case 'mid-write':
        kill = { at: 'write', step: pick(STEPS), n: between(1, 12) };
        break;
      case 'timer':
        timerMs = between(0, 700);
        break;
    }
    const config: WorkerConfig = {
      ...baseConfig(server, lane),
      enqueue: options.opsPerChild ?? 3,
      opPrefix: `l${lane.index}c${cycle}`,
      ...(kill === undefined ? {} : { kill }),
    };
    const worker = await spawnWorker(config);
    report.children++;
    watchAcknowledgements(lane, worker);
    if (timerMs !== undefined) {
      const ms = timerMs;
      void waitForLine(worker, 'ready').then(() => setTimeout(() => worker.kill(), ms));
    }
    if (hold !== undefined) void hold.arrived.then(() => worker.kill());
    const watchdog = setTimeout(() => {
      report.problems.push(`lane ${lane.index} cycle ${cycle}: child did not finish in ${WORKER_TIMEOUT_MS} ms`);
      worker.kill();
    }, WORKER_TIMEOUT_MS);
    const exit = await worker.exited;
    clearTimeout(watchdog);
    // Let a held response go (to a dead socket); a hold that caught nothing passes its request through later.
    hold?.release();
    if (exit.killed) {
      lane.kills++;
      report.kills++;
      report.killsByMoment[moment]++;
      if (random() < 0.2) plantTornTemp(lane, worker.pid, cycle, report);
    } else if (exit.code === 0) {
      report.survived++;
    } else {
      report.problems.push(`lane ${lane.index} cycle ${cycle} (${moment}): exit ${exit.code}: ${exit.stderr.trim()}`);
    }
    options.log?.(
      `lane ${lane.index} cycle ${cycle} ${moment}: ${exit.killed ? 'killed' : `exit ${exit.code}`} (kills ${lane.kills})`,
    );
  }

  await drainLane(server, lane, report);
}

/**
 * Crash debris a SIGKILL alone rarely produces, planted beside a record of
 * the lane: a claim (temp) file holding half a record, either with the dead
 * child's holder line (killed mid-update) or torn and older than the boot
 * (a power cut mid-write). It must be ignored, taken over and cleaned up,
 * never read or quarantined.
 */
function plantTornTemp(lane: Lane, pid: number, cycle: number, report: CrashReport): void {
  const names = fs.readdirSync(lane.dir).filter((n) => n.endsWith('.json'));
  const name = names[cycle % Math.max(1, names.length)];
  if (name === undefined) return;
  const path = join(lane.dir, `${name}.pending`);
  const half = fs.readFileSync(join(lane.dir, name), 'utf8').slice(0, 150);
  try {
    if (cycle % 2 === 0) {
      fs.writeFileSync(
        path,
        `${half}\n${JSON.stringify({ host: testMachine.hostId(), pid, token: 'torn00000000' })}\n`,
        {
          flag: 'wx',
        },
      );
    } else {
      fs.writeFileSync(path, half, { flag: 'wx' });
      beforeBoot(path);
    }
    report.tornTempFiles++;
  } catch {
    // The dead child left a claim on that record itself: that is debris enough.
  }
}
