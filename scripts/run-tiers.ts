/**
 * Runs test tiers one after another, each even when an earlier one failed,
 * and prints one summary (scripts/test-all.ts is `npm test`).
 */
import { spawnSync } from 'node:child_process';

export interface Tier {
  name: string;
  /** A shell command; its output goes straight to this process's. */
  command: string;
  /** Added to the environment of the command. */
  env?: Record<string, string>;
}

export interface TierResult {
  name: string;
  ok: boolean;
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  seconds: number;
}

/** Runs every tier in order, whatever the ones before did; `ok` only when all passed. */
export function runTiers(
  tiers: readonly Tier[],
  log: (line: string) => void = console.log,
): { ok: boolean; results: TierResult[] } {
  const results: TierResult[] = [];
  for (const tier of tiers) {
    log(`\n━━ ${tier.name}: ${tier.command}`);
    const started = performance.now();
    const run = spawnSync(tier.command, { shell: true, stdio: 'inherit', env: { ...process.env, ...tier.env } });
    const seconds = Math.round((performance.now() - started) / 1000);
    results.push({ name: tier.name, ok: run.status === 0, code: run.status, seconds });
  }
  log('\n━━ summary');
  for (const result of results) {
    const status = result.ok ? 'pass' : `FAIL (exit ${result.code ?? 'signal'})`;
    log(`${result.name.padEnd(16)} ${status.padEnd(18)} ${result.seconds} s`);
  }
  const failed = results.filter((result) => !result.ok);
  log(
    failed.length === 0
      ? 'all tiers passed'
      : `${failed.length} tier(s) failed: ${failed.map((r) => r.name).join(', ')}`,
  );
  return { ok: failed.length === 0, results };
}
