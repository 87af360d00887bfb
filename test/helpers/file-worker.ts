/**
 * Spawning the crash-test worker (test/crash/worker.ts) as a real child
 * process and reading its stdout protocol.
 *
 * The worker is bundled once per test file with esbuild (a dev dependency)
 * into a temp directory: a bundled child starts in ~0.2 s, `node --import tsx`
 * in ~0.8 s on a small CI box, and the crash test starts hundreds of them.
 * Set `ONCELY_WORKER_RUNNER=tsx` to run the TypeScript source through tsx instead.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { WorkerConfig } from '../crash/worker.js';

const WORKER_SOURCE = fileURLToPath(new URL('../crash/worker.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let built: Promise<string[]> | undefined;
let buildDir: string | undefined;

/** The command line (after `node`) that runs the worker. Built once per process. */
export function workerCommand(): Promise<string[]> {
  built ??= (async () => {
    if (process.env.ONCELY_WORKER_RUNNER === 'tsx') return ['--import', 'tsx', WORKER_SOURCE];
    const { build } = await import('esbuild');
    const outDir = fs.mkdtempSync(join(tmpdir(), 'oncely-worker-'));
    buildDir = outDir;
    const outfile = join(outDir, 'worker.mjs');
    await build({
      entryPoints: [WORKER_SOURCE],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile,
      logLevel: 'error',
    });
    return [outfile];
  })();
  return built;
}

/** Removes the bundled worker (call in `afterAll`; the test runner may end its process without an exit event). */
export function disposeWorkerBuild(): void {
  if (buildDir !== undefined) fs.rmSync(buildDir, { recursive: true, force: true });
  buildDir = undefined;
  built = undefined;
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Whether the process died of SIGKILL (ours, or its own kill plan). */
  killed: boolean;
  lines: string[];
  stderr: string;
}

export interface Worker {
  child: ChildProcess;
  pid: number;
  /** Every stdout line so far. */
  lines: string[];
  /** Calls `fn` for each stdout line (past and future). */
  onLine(fn: (line: string) => void): void;
  exited: Promise<WorkerExit>;
  kill(): void;
}

export async function spawnWorker(config: WorkerConfig): Promise<Worker> {
  const command = await workerCommand();
  const child = spawn(process.execPath, [...command, JSON.stringify(config)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchWorker(child);
}

/** Resolves once the worker printed a line starting with `prefix` (or exited first: then false). */
export function waitForLine(worker: Worker, prefix: string): Promise<boolean> {
  return new Promise((resolve) => {
    worker.onLine((line) => {
      if (line.startsWith(prefix)) resolve(true);
    });
    void worker.exited.then(() => resolve(false));
  });
}

/** The line protocol of a worker child: every stdout line, listeners for more, its exit, a SIGKILL. */
export function watchWorker(child: ChildProcess): Worker {
  const lines: string[] = [];
  const listeners: ((line: string) => void)[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  reader.on('line', (line) => {
    lines.push(line);
    for (const fn of listeners) fn(line);
  });
  const closed = new Promise<void>((resolve) => reader.once('close', resolve));
  const exited = new Promise<WorkerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      // Wait for the rest of stdout so no acknowledged line is missed.
      void closed.then(() => resolve({ code, signal, killed: signal === 'SIGKILL', lines, stderr }));
    });
  });
  return {
    child,
    pid: child.pid ?? -1,
    lines,
    onLine(fn) {
      for (const line of lines) fn(line);
      listeners.push(fn);
    },
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
