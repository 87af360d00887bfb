/**
 * Child process for the PostgreSQL fleet tests: a real oncely user, a
 * client on a `postgresStore` shared with its sibling processes, talking to
 * the reference server of the parent test process (whose ledger outlives
 * every child).
 *
 * Configured by one JSON argument (`PgWorkerConfig`). Prints one line per
 * event on stdout: `ready`, `enq <key> <op>` once an operation is written
 * ahead, `fenced <key>` when a write of this process was refused because
 * another owner took the operation over, `done <json>` at the end.
 *
 * It enqueues `enqueue` new operations, then drains the shared table with
 * `resume()` (woken by LISTEN/NOTIFY, polling as the fallback) until nothing
 * is pending or in flight. A `kill` plan makes it SIGKILL itself at the
 * n-th attempt it starts (optionally `afterMs` later: mid-request).
 */
import { LeaseLostError } from '../../src/errors.js';
import { createClient } from '../../src/node.js';
import { postgresStore } from '../../src/postgres.js';
import type { OperationStore } from '../../src/store/store.js';

export interface PgWorkerConfig {
  url: string;
  table: string;
  baseUrl: string;
  path: string;
  enqueue: number;
  opPrefix: string;
  /** Operations i of one child go to scope `${opPrefix}-s${i % scopes}` when set. */
  scopes?: number;
  leaseMs: number;
  attemptTimeoutMs: number;
  concurrency: number;
  kill?: { n: number; afterMs?: number };
  /** No `headers` callback: attempt 1 of an operation never tried can start in the claim itself. @default true */
  credentials?: boolean;
  /** This worker's clock is this far ahead of the machine's (negative: behind), for the client and the store alike. */
  skewMs?: number;
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
}

/** Reports each write refused by the fence (the engine then stops driving that operation). */
function reportingFences(store: OperationStore): OperationStore {
  return Object.assign(Object.create(store) as OperationStore, {
    update: (key: string, fn: Parameters<OperationStore['update']>[1]) =>
      store.update(key, fn).catch((error: unknown) => {
        if (error instanceof LeaseLostError) print(`fenced ${key}`);
        throw error;
      }),
  });
}

async function run(config: PgWorkerConfig): Promise<void> {
  const skewMs = config.skewMs ?? 0;
  const now = (): number => Date.now() + skewMs;
  const store = postgresStore({ connectionString: config.url, table: config.table, poolSize: 4, now });
  const client = createClient({
    runtime: { now },
    store: reportingFences(store),
    baseUrl: config.baseUrl,
    leaseMs: config.leaseMs,
    concurrency: config.concurrency,
    ...(config.credentials === false ? {} : { headers: () => ({ authorization: 'Bearer fleet-secret' }) }),
    policy: {
      attemptTimeoutMs: config.attemptTimeoutMs,
      // Kills close attempts as ambiguous; they must not exhaust the operation.
      maxAttempts: 1_000,
      deadlineMs: 30 * 60_000,
      backoff: { baseDelayMs: 5, maxDelayMs: 50 },
      retryAfter: { jitterMs: 10 },
    },
  });
  const plan = config.kill;
  if (plan !== undefined) {
    let seen = 0;
    client.on('attempt:started', () => {
      if (++seen !== plan.n) return;
      if (plan.afterMs === undefined) die();
      setTimeout(die, plan.afterMs);
    });
  }
  let woken: () => void = () => undefined;
  store.onWake(() => woken());
  print('ready');

  const settled: Promise<unknown>[] = [];
  for (let i = 0; i < config.enqueue; i++) {
    const op = `${config.opPrefix}-${i}`;
    const scope = config.scopes === undefined ? undefined : `${config.opPrefix}-s${i % config.scopes}`;
    const enqueued = await client.enqueue({
      method: 'POST',
      url: config.path,
      json: { op, amount: 100 + i, scope, index: Math.floor(i / (config.scopes ?? 1)) },
      ...(scope === undefined ? {} : { scope }),
    });
    print(`enq ${enqueued.key} ${op}`);
    settled.push(enqueued.settled);
  }

  // Drain the shared table: operations held by a live sibling are skipped
  // (it is sending them); a dead one's are taken over once its lease ends.
  let rounds = 0;
  for (;;) {
    rounds++;
    await client.resume();
    const open = await store.list({ state: ['pending', 'in_flight'], limit: 1 });
    if (open.length === 0) break;
    // Until a wake-up (a lease released, work enqueued) or the poll interval.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 50);
      woken = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  await Promise.all(settled);
  print(`done ${JSON.stringify({ rounds })}`);
  await client.close();
  await store.close();
}

const config = JSON.parse(process.argv[2] ?? '{}') as PgWorkerConfig;
run(config).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
