/**
 * Child process of the fleet benchmark: one worker, with the built package.
 *
 * - `postgres`: a client on the shared `postgresStore`; every statement its
 *   pools send is counted (`Pool.prototype.query` wrapped), each claim timed. On `drain` it calls
 *   `resume()` (which claims through `claimDue`) until the table has nothing
 *   open, woken by LISTEN/NOTIFY or a 20 ms poll, and reports.
 * - `memory`: the baseline, a client on the memory store in this one
 *   process; on `drain` it sends `count` operations, `concurrency` at a time.
 *
 *   node --import tsx fleet-worker-child.ts '<json WorkerConfig>'   (IPC: {cmd:'drain'|'exit'})
 */
import { createClient, memoryStore } from 'oncely/node';
import { postgresStore } from 'oncely/postgres';
import pg from 'pg';

export interface WorkerConfig {
  mode: 'postgres' | 'memory';
  name: string;
  api: string;
  concurrency: number;
  leaseMs: number;
  url?: string;
  table?: string;
  /** oncely's `preparedStatements` (false: as before they were named, to measure what naming them saves). */
  preparedStatements?: boolean;
  /** graphile-worker's task: how it sends (oncely/node chooses its own). @default 'fetch' */
  send?: 'fetch' | 'node:http';
}

export interface DrainReport {
  name: string;
  /** Operations this worker drove to `succeeded` during the drain. */
  ops: number;
  statements: number;
  /** Round trip of each claim statement, ms. */
  claimMs: number[];
  /** Each whole claim call (`store.claimDue`: a connection from the pool, the statement, each row checked), ms. */
  claimCallMs: number[];
  /** Passes of `resume()` (each ends with one look for open rows). */
  passes: number;
  cpuMs: number;
  wallMs: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
let statements = 0;
let claimMs: number[] = [];
let claimCallMs: number[] = [];

/**
 * Counts every statement the store sends (all go through `Pool.prototype.query`
 * of its two pools; migrations and LISTEN use their own connections) and times claims.
 */
function countStatements(): void {
  const query = pg.Pool.prototype.query as (...args: unknown[]) => Promise<unknown>;
  Object.assign(pg.Pool.prototype, {
    async query(this: pg.Pool, ...args: unknown[]) {
      statements++;
      const first = args[0];
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
      if (!text.startsWith('WITH picked')) return query.apply(this, args);
      const t0 = performance.now();
      try {
        return await query.apply(this, args);
      } finally {
        claimMs.push(performance.now() - t0);
      }
    },
  });
}

if (config.mode === 'postgres') countStatements();
const store =
  config.mode === 'memory'
    ? memoryStore()
    : postgresStore({
        connectionString: config.url as string,
        table: config.table ?? 'fleet_bench',
        poolSize: config.concurrency + 2,
        preparedStatements: config.preparedStatements ?? true,
      });
// Times each whole claim call as the client makes it (it calls the store's method, bound when the client is built).
if (config.mode === 'postgres' && 'claimDue' in store) {
  const claimDue = store.claimDue.bind(store);
  store.claimDue = async (request) => {
    const t0 = performance.now();
    try {
      return await claimDue(request);
    } finally {
      claimCallMs.push(performance.now() - t0);
    }
  };
}

const client = createClient({
  store,
  baseUrl: config.api,
  owner: `${config.name}-${process.pid}`,
  leaseMs: config.leaseMs,
  concurrency: config.concurrency,
  policy: { attemptTimeoutMs: 5_000, deadlineMs: 10 * 60_000, backoff: { baseDelayMs: 20, maxDelayMs: 200 } },
});

let wake: () => void = () => undefined;
if ('onWake' in store) store.onWake(() => wake());

async function drainPostgres(): Promise<{ ops: number; passes: number }> {
  let ops = 0;
  let passes = 0;
  for (;;) {
    passes++;
    ops += (await client.resume()).succeeded;
    if ((await store.list({ state: ['pending', 'in_flight'], limit: 1 })).length === 0) return { ops, passes };
    await new Promise<void>((resolve) => {
      const poll = setTimeout(resolve, 20);
      wake = () => {
        clearTimeout(poll);
        resolve();
      };
    });
  }
}

async function sendMemory(count: number): Promise<{ ops: number; passes: number }> {
  let next = 0;
  let ops = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await client.send({ method: 'POST', url: '/payments', json: { payment: i, amount: 100 } });
      ops++;
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, lane));
  return { ops, passes: 1 };
}

process.on('message', (message: { cmd: 'drain' | 'exit'; count?: number }) => {
  if (message.cmd === 'exit') {
    void (async () => {
      await client.close();
      await store.close?.();
      process.exit(0);
    })();
    return;
  }
  void (async () => {
    statements = 0;
    claimMs = [];
    claimCallMs = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const done = config.mode === 'postgres' ? await drainPostgres() : await sendMemory(message.count ?? 0);
    const cpu = process.cpuUsage(cpu0);
    const report: DrainReport = {
      name: config.name,
      ...done,
      statements,
      claimMs,
      claimCallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs: performance.now() - t0,
    };
    process.send?.(report);
  })();
});
process.send?.({ ready: true });
