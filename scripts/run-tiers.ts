/**
 * Runs test tiers one after another, each even when an earlier one failed,
 * and prints one summary (scripts/test-all.ts is `npm test`). Each tier's
 * output goes straight through and is also kept, so that the summary can
 * end with why each red tier failed (scripts/failure-digest.ts).
 */
import { spawn } from 'node:child_process';
import { failureDigest } from './failure-digest.js';

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
  /** For a red tier, what its output said about the failure (see failureDigest); else empty. */
  digest: string[];
}

/** Output kept per tier for its digest: the tail is where a test runner reports failures. */
const KEPT_CHARS = 4_000_000;

interface Streams {
  stdout: (chunk: Buffer) => void;
  stderr: (chunk: Buffer) => void;
}

const passThrough: Streams = {
  stdout: (chunk) => process.stdout.write(chunk),
  stderr: (chunk) => process.stderr.write(chunk),
};

/**
 * Runs every tier in order, whatever the ones before did; `ok` only when all
 * passed. Red tiers' digests come after the per-tier lines, and the verdict
 * is the last line.
 */
export async function runTiers(
  tiers: readonly Tier[],
  log: (line: string) => void = console.log,
  streams: Streams = passThrough,
): Promise<{ ok: boolean; results: TierResult[] }> {
  const results: TierResult[] = [];
  for (const tier of tiers) {
    log(`\n━━ ${tier.name}: ${tier.command}`);
    const started = performance.now();
    const { code, output } = await run(tier, streams);
    const seconds = Math.round((performance.now() - started) / 1000);
    const ok = code === 0;
    results.push({ name: tier.name, ok, code, seconds, digest: ok ? [] : failureDigest(output) });
  }
  const failed = results.filter((result) => !result.ok);
  for (const result of failed) {
    log(`\n━━ why ${result.name} failed (its output, shortened)`);
    for (const line of result.digest) log(line);
  }
  log('\n━━ summary');
  for (const result of results) {
    const status = result.ok ? 'pass' : `FAIL (exit ${result.code ?? 'signal'})`;
    log(`${result.name.padEnd(16)} ${status.padEnd(18)} ${result.seconds} s`);
  }
  log(
    failed.length === 0
      ? 'all tiers passed'
      : `${failed.length} tier(s) failed: ${failed.map((r) => r.name).join(', ')}`,
  );
  return { ok: failed.length === 0, results };
}

function run(tier: Tier, streams: Streams): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length > KEPT_CHARS * 2) output = output.slice(-KEPT_CHARS);
    };
    const child = spawn(tier.command, {
      shell: true,
      stdio: ['inherit', 'pipe', 'pipe'],
      // Piped, a test runner would drop its colours; keep them when this terminal shows them.
      env: { ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}), ...process.env, ...tier.env },
    });
    child.stdout.on('data', (chunk: Buffer) => {
      streams.stdout(chunk);
      keep(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      streams.stderr(chunk);
      keep(chunk);
    });
    child.on('error', (error) => {
      output += `\n${error.message}\n`;
    });
    child.on('close', (code) => resolve({ code, output }));
  });
}
