/**
 * Crash loops: processes that die again and again right after they start
 * must still make progress, one store call at a time, and leave nothing
 * that stalls the next one (principle 11: a crash between two steps of an
 * acquisition is broken by anyone, promptly, judged by the file's own age).
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleRecord } from '../../src/store.js';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { claimPathOf, removeTempDirs, tempDir } from '../helpers/file-store.js';
import { disposeWorkerBuild, spawnWorker, type WorkerExit, workerCommand } from '../helpers/file-worker.js';
import { fileStore } from '../helpers/machine.js';
import { runCrashLoop } from './crash-loop.js';

/** The life of each short-lived process once loaded: below the claim grace (1 s), as a crash loop's would be. */
const LIFE_MS = 800;
/**
 * Kills in the normal suite: 40 take 15–25 s on a two-core box (each child
 * loads Node and the bundled client first), which keeps the crash suite
 * near its budget. `scripts/soak.ts` runs the full count (`--loop-kills`,
 * default 1,000).
 */
const LOOP_KILLS = 40;

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer();
  await workerCommand(); // bundle the worker once, outside the timed tests
});
afterAll(async () => {
  await server.close();
  removeTempDirs();
  disposeWorkerBuild();
});

async function exitOf(config: Parameters<typeof spawnWorker>[0]): Promise<WorkerExit> {
  const worker = await spawnWorker(config);
  const watchdog = setTimeout(() => worker.kill(), 20_000);
  const exit = await worker.exited;
  clearTimeout(watchdog);
  return exit;
}

describe('crash loops (child processes, SIGKILL)', () => {
  it('a claim left empty by a kill does not stall short-lived processes: 20 in a row each complete one update', async () => {
    const dir = tempDir('oncely-crash-loop-');
    const setup = fileStore({ dir });
    await setup.put(sampleRecord('k'));
    await setup.close();
    const claim = claimPathOf(dir, 'k');

    // Killed for real between creating its claim and writing the holder line: an empty claim
    // that names nobody, stale once it is older than the grace by its own mtime (claim.md).
    const killed = await exitOf({ mode: 'update', dir, key: 'k', kill: { at: 'write', step: 'claim-opened', n: 1 } });
    expect(killed.killed).toBe(true);
    expect(fs.readFileSync(claim, 'utf8')).toBe('');
    // Made fresh again: the processes below start within the grace.
    fs.writeFileSync(claim, '');

    const outcomes: string[] = [];
    let streak = 0;
    for (let i = 0; i < 40 && streak < 20; i++) {
      const exit = await exitOf({ mode: 'update', dir, key: 'k', lifeMs: LIFE_MS });
      const done = exit.code === 0 && exit.lines.some((line) => line.startsWith('done '));
      outcomes.push(done ? 'done' : exit.killed ? 'killed' : `exit ${exit.code}: ${exit.stderr.trim()}`);
      streak = done ? streak + 1 : 0;
    }
    expect(streak, outcomes.join(', ')).toBe(20);
    // Only a process that looked while the claim was younger than the grace had to wait for it.
    expect(outcomes.indexOf('done'), outcomes.join(', ')).toBeLessThanOrEqual(2);

    const store = fileStore({ dir });
    expect((await store.get('k'))?.epoch).toBeGreaterThanOrEqual(20);
    await store.list(); // sweeps claim debris, if any were left
    await store.close();
    expect(fs.readdirSync(dir).filter((name) => name.includes('.pending'))).toEqual([]);
  }, 90_000);

  it(`${LOOP_KILLS} processes killed at their first write or within 300 ms, then one drains: exactly one effect each`, async () => {
    const report = await runCrashLoop(server, { lanes: 4, killsPerLane: LOOP_KILLS / 4, maxLifeMs: 300 });
    const { problems, ...figures } = report;
    console.log(`crash loop figures: ${JSON.stringify(figures)}`);
    expect(problems).toEqual([]);
    expect(report.kills).toBeGreaterThanOrEqual(LOOP_KILLS);
    // Most children die before any write of theirs completed, however fast or slow the machine runs them;
    expect(report.killedBeforeFirstWrite).toBeGreaterThanOrEqual(report.kills / 2);
    // and some only after writing operations ahead (else nothing after the first write was tested).
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.operations).toBeGreaterThanOrEqual(report.acknowledged);
    expect(report.effects).toBe(report.operations);
    expect(report.quarantined).toBe(0);
  }, 120_000);

  it(`exclusive stores: ${LOOP_KILLS / 2} owners killed at their first write or within 300 ms, then one drains: exactly one effect each`, async () => {
    // Each child owns its lane's directory; a killed owner's journal (its files lag it) is replayed by the next.
    const report = await runCrashLoop(server, {
      lanes: 2,
      killsPerLane: LOOP_KILLS / 4,
      maxLifeMs: 300,
      exclusive: true,
    });
    const { problems, ...figures } = report;
    console.log(`exclusive crash loop figures: ${JSON.stringify(figures)}`);
    expect(problems).toEqual([]);
    expect(report.kills).toBeGreaterThanOrEqual(LOOP_KILLS / 2);
    expect(report.killedBeforeFirstWrite).toBeGreaterThanOrEqual(report.kills / 2);
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.operations).toBeGreaterThanOrEqual(report.acknowledged);
    expect(report.effects).toBe(report.operations);
    expect(report.quarantined).toBe(0);
  }, 120_000);
});
