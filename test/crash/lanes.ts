/**
 * What every crash scenario shares (harness.ts: kills at chosen moments;
 * crash-loop.ts: kills right after start): lanes, each a store directory
 * and a request path of its own on the caller's reference server, the
 * worker configuration, the final drain, and the check of a lane: every
 * operation ended with exactly one effect under its first key, none lost,
 * none quarantined, no debris left.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UNREADABLE_CLAIM_GRACE_MS } from '../../src/store/file/claim.js';
import { type ReferenceServer, seededRandom } from '../../src/testing.js';
import { spawnWorker } from '../helpers/file-worker.js';
import { fileStore } from '../helpers/machine.js';
import type { WorkerConfig } from './worker.js';

/** The figures every scenario reports. */
export interface LaneReport {
  seed: number;
  kills: number;
  /** Children started, the final drains included. */
  children: number;
  /** Children whose kill did not come (they finished their work first). */
  survived: number;
  /** Operations stored at the end (all lanes). */
  operations: number;
  /** Operations whose enqueue the parent saw acknowledged. */
  acknowledged: number;
  /** Children killed before they acknowledged any enqueue (crash loops). */
  killedBeforeFirstWrite: number;
  /** Business effects on the ledger for the lanes' operations. */
  effects: number;
  requests: number;
  /** Highest number of requests of one key in flight at once (a dead sender's request may overlap its successor's). */
  maxConcurrent: number;
  /** Empty files of claims being created when their process died (swept once older than the grace). */
  emptyClaimsSwept: number;
  quarantined: number;
  durationMs: number;
  /** Every broken guarantee found; empty when the run passed. */
  problems: string[];
}

export interface Lane {
  index: number;
  dir: string;
  path: string;
  random: () => number;
  /** key → op id, for every enqueue a child acknowledged on stdout. */
  acknowledged: Map<string, string>;
  kills: number;
  /** Its children open the store `exclusive` (one owner at a time; a killed one is taken over at once). */
  exclusive: boolean;
}

export const WORKER_TIMEOUT_MS = 60_000;

export function newLaneReport(seed: number): LaneReport {
  return {
    seed,
    kills: 0,
    children: 0,
    survived: 0,
    operations: 0,
    acknowledged: 0,
    killedBeforeFirstWrite: 0,
    effects: 0,
    requests: 0,
    maxConcurrent: 0,
    emptyClaimsSwept: 0,
    quarantined: 0,
    durationMs: 0,
    problems: [],
  };
}

/** `count` lanes with fresh directories and kill-plan randomness reproducible from `seed`. */
export function makeLanes(count: number, seed: number, prefix: string, exclusive = false): Lane[] {
  return Array.from({ length: count }, (_, index) => ({
    index,
    exclusive,
    dir: fs.mkdtempSync(join(tmpdir(), `oncely-${prefix}-${index}-`)),
    path: `/${prefix}-${index}/payments`,
    random: seededRandom(seed + index * 7919),
    acknowledged: new Map(),
    kills: 0,
  }));
}

export function removeLanes(lanes: readonly Lane[]): void {
  for (const lane of lanes) fs.rmSync(lane.dir, { recursive: true, force: true });
}

export function baseConfig(
  server: ReferenceServer,
  lane: Lane,
): Omit<Extract<WorkerConfig, { mode: 'run' }>, 'enqueue'> {
  return {
    mode: 'run',
    dir: lane.dir,
    baseUrl: server.url,
    path: lane.path,
    opPrefix: '',
    leaseMs: 200,
    attemptTimeoutMs: 500,
    concurrency: 8,
    exclusive: lane.exclusive,
  };
}

/** Records each enqueue the worker acknowledges (`enq <key> <op>`) as the lane's. */
export function watchAcknowledgements(lane: Lane, worker: { onLine(fn: (line: string) => void): void }): void {
  worker.onLine((line) => {
    const [word, key, op] = line.split(' ');
    if (word === 'enq' && key !== undefined && op !== undefined) lane.acknowledged.set(key, op);
  });
}

/** The final child kills nothing: it resumes everything the dead ones left. */
export async function drainLane(server: ReferenceServer, lane: Lane, report: LaneReport): Promise<void> {
  const drain = await spawnWorker({ ...baseConfig(server, lane), enqueue: 0 });
  report.children++;
  const watchdog = setTimeout(() => drain.kill(), WORKER_TIMEOUT_MS);
  const exit = await drain.exited;
  clearTimeout(watchdog);
  if (exit.code !== 0) {
    report.problems.push(`lane ${lane.index}: final drain failed (${exit.code ?? exit.signal}): ${exit.stderr.trim()}`);
  }
}

export async function verifyLane(server: ReferenceServer, lane: Lane, report: LaneReport): Promise<void> {
  const problem = (text: string): void => {
    report.problems.push(`lane ${lane.index}: ${text}`);
  };
  // No crash debris survives a list() (resume runs one): dead claims are
  // taken over and cleaned up, in the record directory and the journal's.
  // What names no living holder (a claim being created, killed before its
  // holder line was written; a takeover killed half-way) is swept once older
  // than the grace (claim.md): give young debris its time, then sweep again.
  const debris = (): string[] => [
    ...fs
      .readdirSync(lane.dir)
      .filter((n) => !n.endsWith('.json') && n !== 'quarantine' && n !== 'journal' && n !== 'removed'),
    ...fs
      .readdirSync(join(lane.dir, 'journal'))
      .filter((n) => !n.endsWith('.log'))
      .map((n) => join('journal', n)),
  ];
  const young = debris();
  if (young.length > 0) {
    report.emptyClaimsSwept += young.filter((n) => fs.statSync(join(lane.dir, n)).size === 0).length;
    const newest = Math.max(...young.map((n) => fs.statSync(join(lane.dir, n)).mtimeMs));
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, newest + UNREADABLE_CLAIM_GRACE_MS + 100 - Date.now())),
    );
    const sweeper = fileStore({ dir: lane.dir });
    await sweeper.list();
    await sweeper.close();
  }
  for (const name of debris()) {
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
