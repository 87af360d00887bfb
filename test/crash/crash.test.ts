/**
 * Crash safety end to end: 200+ SIGKILLs of child processes that use the
 * file store, at every interesting moment (see harness.ts), against a
 * reference server in this process. Every operation must end with exactly
 * one effect, sent under one key, none lost, no record corrupt.
 * `scripts/soak.ts` runs the same harness with 1,000+ kills.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { disposeWorkerBuild, workerCommand } from '../helpers/file-worker.js';
import { KILL_MOMENTS, runCrashLanes } from './harness.js';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer();
  await workerCommand(); // bundle the worker once, outside the timed test
});
afterAll(async () => {
  await server.close();
  disposeWorkerBuild();
});

describe('crash safety of the file store (child processes, SIGKILL)', () => {
  it('200+ kills at random moments: every operation ends with exactly one effect under its first key', async () => {
    const report = await runCrashLanes(server, { lanes: 4, killsPerLane: 52, opsPerChild: 3 });
    const { problems, ...figures } = report;
    console.log(`crash test figures: ${JSON.stringify(figures)}`);
    expect(problems).toEqual([]);
    expect(report.kills).toBeGreaterThanOrEqual(200);
    for (const moment of KILL_MOMENTS) expect(report.killsByMoment[moment], moment).toBeGreaterThan(0);
    expect(report.operations).toBeGreaterThanOrEqual(report.acknowledged);
    expect(report.effects).toBe(report.operations);
    expect(report.quarantined).toBe(0);
  }, 180_000);
});
