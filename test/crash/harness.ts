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
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { fileStore } from '../../src/node.js';
import { EMPTY_CLAIM_SWEEP_AGE_MS } from '../../src/store/file/claim.js';
import type { WriteStep } from '../../src/store/file/durable.js';
import { HOST_ID } from '../../src/store/file/liveness.js';
import { type Hold, type ReferenceServer, seededRandom } from '../../src/testing.js';
import { spawnWorker, waitForLine } from '../helpers/file-worker.js';
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

export interface CrashReport {
  seed: number;
  kills: number;
  /** Children started, the final drains included. */
  children: number;
  killsByMoment: Record<KillMoment, number>;
  /** Children whose kill plan did not trigger (they finished their work first). */
  survived: number;
  /** Operations stored at the end (all lanes). */
  operations: number;
  /** Operations whose enqueue the parent saw acknowledged. */
  acknowledged: number;
  /** Business effects on the ledger for the lanes' operations. */
  effects: number;
  requests: number;
  /** Highest number of requests of one key in flight at once (a dead sender's request may overlap its successor's). */
  maxConcurrent: number;
  tornTempFiles: number;
  /** Claim files left empty by a kill right after their creation (swept by a later list()). */
  emptyClaimsSwept: number;
  quarantined: number;
  durationMs: number;
  /** Every broken guarantee found; empty when the run passed. */
  problems: string[];
}

const WORKER_TIMEOUT_MS = 60_000;
const STEPS: WriteStep[] = ['temp-written', 'durable', 'renamed'];

interface Lane {
  index: number;
  dir: string;
  path: string;
  random: () => number;
  /** key → op id, for every enqueue a child acknowledged on stdout. */
  acknowledged: Map<string, string>;
  kills: number;
}

export async function runCrashLanes(server: ReferenceServer, options: CrashOptions): Promise<CrashReport> {
  const started = Date.now();
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const laneCount = options.lanes ?? 4;
  const report: CrashReport = {
    seed,
    kills: 0,
    children: 0,
    killsByMoment: Object.fromEntries(KILL_MOMENTS.map((m) => [m, 0])) as Record<KillMoment, number>,
    survived: 0,
    operations: 0,
    acknowledged: 0,
    effects: 0,
    requests: 0,
    maxConcurrent: 0,
    tornTempFiles: 0,
    emptyClaimsSwept: 0,
    quarantined: 0,
    durationMs: 0,
    problems: [],
  };
  const lanes: Lane[] = Array.from({ length: laneCount }, (_, index) => ({
    index,
    dir: fs.mkdtempSync(join(tmpdir(), `oncely-crash-${index}-`)),
    path: `/lane-${index}/payments`,
    random: seededRandom(seed + index * 7919), // reproducible kill plans from a seed
    acknowledged: new Map(),
    kills: 0,
  }));
  try {
    await Promise.all(lanes.map((lane) => runLane(server, lane, options, report)));
    for (const lane of lanes) await verifyLane(server, lane, report);
  } finally {
    for (const lane of lanes) fs.rmSync(lane.dir, { recursive: true, force: true });
  }
  report.durationMs = Date.now() - started;
  return report;
}

function baseConfig(server: ReferenceServer, lane: Lane): Omit<Extract<WorkerConfig, { mode: 'run' }>, 'enqueue'> {
  return {
    mode: 'run',
    dir: lane.dir,
    baseUrl: server.url,
    path: lane.path,
    opPrefix: '',
    leaseMs: 200,
    attemptTimeoutMs: 500,
    concurrency: 8,
  };
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
    worker.onLine((line) => {
      const [word, key, op] = line.split(' ');
      if (word === 'enq' && key !== undefined && op !== undefined) lane.acknowledged.set(key, op);
    });
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

  // The final child kills nothing: it resumes everything the dead ones left.
  const drain = await spawnWorker({ ...baseConfig(server, lane), enqueue: 0 });
  report.children++;
  const watchdog = setTimeout(() => drain.kill(), WORKER_TIMEOUT_MS);
  const exit = await drain.exited;
  clearTimeout(watchdog);
  if (exit.code !== 0) {
    report.problems.push(`lane ${lane.index}: final drain failed (${exit.code ?? exit.signal}): ${exit.stderr.trim()}`);
  }
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
      fs.writeFileSync(path, `${half}\n${JSON.stringify({ host: HOST_ID, pid, token: 'torn00000000' })}\n`, {
        flag: 'wx',
      });
    } else {
      fs.writeFileSync(path, half, { flag: 'wx' });
      const then = new Date(Date.now() - uptime() * 1000 - 3_600_000);
      fs.utimesSync(path, then, then);
    }
    report.tornTempFiles++;
  } catch {
    // The dead child left a claim on that record itself: that is debris enough.
  }
}

async function verifyLane(server: ReferenceServer, lane: Lane, report: CrashReport): Promise<void> {
  const problem = (text: string): void => {
    report.problems.push(`lane ${lane.index}: ${text}`);
  };
  // No crash debris survives a list() (resume runs one): dead claims (temp
  // files) are taken over and cleaned up. A claim file left empty (killed
  // between creating it and writing its holder line) names no holder, so it
  // is only swept once old enough: give those their time, then sweep again.
  const debris = () =>
    fs.readdirSync(lane.dir).filter((n) => !n.endsWith('.json') && n !== 'quarantine' && n !== 'journal');
  const empty = debris().filter((n) => fs.statSync(join(lane.dir, n)).size === 0);
  if (empty.length > 0) {
    report.emptyClaimsSwept += empty.length;
    const newest = Math.max(...empty.map((n) => fs.statSync(join(lane.dir, n)).mtimeMs));
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, newest + EMPTY_CLAIM_SWEEP_AGE_MS + 100 - Date.now())),
    );
    const sweeper = fileStore({ dir: lane.dir });
    await sweeper.list();
    await sweeper.close();
  }
  const leftovers = debris();
  for (const name of leftovers) {
    const path = join(lane.dir, name);
    const text = fs.readFileSync(path, 'utf8');
    const ageMs = Date.now() - fs.statSync(path).mtimeMs;
    problem(`file left: ${name} (${text.length} bytes, ${Math.round(ageMs)} ms old): ${text.slice(-120)}`);
  }

  const store = fileStore({ dir: lane.dir });
  const quarantined = await store.quarantined();
  report.quarantined += quarantined.length;
  for (const entry of quarantined) problem(`quarantined ${entry.id}: ${entry.problems.join('; ')}`);
  const records = await store.list();
  await store.close();
  // Opening the store settled the journals of the killed writers, and a closed handle leaves none of its own.
  for (const name of fs.readdirSync(join(lane.dir, 'journal'))) problem(`journal file left: ${name}`);
  const byKey = new Map(records.map((r) => [r.key, r]));
  report.operations += records.length;
  report.acknowledged += lane.acknowledged.size;

  for (const [key, op] of lane.acknowledged) {
    const record = byKey.get(key);
    if (record === undefined) {
      problem(`acknowledged operation ${op} (${key}) is lost`);
      continue;
    }
    const body =
      record.request.body?.encoding === 'json' ? (JSON.parse(record.request.body.text) as { op?: string }) : {};
    if (body.op !== op) problem(`record ${key} holds op ${String(body.op)}, acknowledged as ${op}`);
  }
  for (const record of records) {
    if (record.state !== 'succeeded') {
      problem(`${record.key} ended ${record.state}: ${record.failure?.message ?? ''}`);
    }
    const effects = server.ledger.effectCount(record.key);
    report.effects += effects;
    if (effects !== 1) problem(`${record.key} has ${effects} effects`);
    report.maxConcurrent = Math.max(report.maxConcurrent, server.ledger.maxConcurrent(record.key));
  }
  // Every request of one operation (one body, so one fingerprint) carried one key, and no key served two operations.
  const keysByFingerprint = new Map<string, Set<string | undefined>>();
  const fingerprintsByKey = new Map<string | undefined, Set<string>>();
  for (const entry of server.ledger.requests) {
    if (entry.path !== lane.path || entry.fingerprint === undefined) continue;
    report.requests++;
    const keys = keysByFingerprint.get(entry.fingerprint) ?? new Set();
    keys.add(entry.key);
    keysByFingerprint.set(entry.fingerprint, keys);
    const prints = fingerprintsByKey.get(entry.key) ?? new Set();
    prints.add(entry.fingerprint);
    fingerprintsByKey.set(entry.key, prints);
    if (entry.key === undefined || !byKey.has(entry.key)) problem(`request with unknown key ${String(entry.key)}`);
  }
  for (const [print, keys] of keysByFingerprint) {
    if (keys.size !== 1) problem(`one operation (${print.slice(0, 12)}) was sent with ${keys.size} keys`);
  }
  for (const [key, prints] of fingerprintsByKey) {
    if (prints.size !== 1) problem(`key ${String(key)} carried ${prints.size} different requests`);
  }
}
