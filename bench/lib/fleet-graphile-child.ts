/**
 * Child process of the fleet benchmark: one graphile-worker process, the
 * contender. Its task is the same payment as oncely's: a POST of the job's
 * payload to the same API, with the job's key as the `Idempotency-Key`, by
 * `fetch` as a graphile-worker user writes it, or (config `send:
 * 'node:http'`) by `http.request` through node:http's global agent, as
 * oncely/node sends: the queue's cost apart from the HTTP client's.
 *
 * On `drain` it runs `runOnce` (graphile-worker's own "work until no job is
 * due, then return", `concurrency` jobs at a time) on a pool it keeps
 * between drains, so connections are warm as oncely's are. It times each
 * `get_job` statement (the claim: `with j as (… for update skip locked)
 * update … returning *`) as oncely's claim is timed. Statements are counted
 * by the parent with pg_stat_statements, for both.
 *
 *   node --import tsx fleet-graphile-child.ts '<json WorkerConfig>'   (IPC: {cmd:'drain'|'exit'})
 */
import * as http from 'node:http';
import { Logger, runOnce, type Task } from 'graphile-worker';
import pg from 'pg';
import type { DrainReport, WorkerConfig } from './fleet-worker-child.js';

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
let claimMs: number[] = [];
let ops = 0;

/** Times graphile-worker's claim statement (it runs its statements on checked-out clients). */
function timeClaims(): void {
  const query = pg.Client.prototype.query as (...args: unknown[]) => Promise<unknown>;
  Object.assign(pg.Client.prototype, {
    async query(this: pg.Client, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
      if (!text.startsWith('with j as')) return query.apply(this, args);
      const t0 = performance.now();
      try {
        return await query.apply(this, args);
      } finally {
        claimMs.push(performance.now() - t0);
      }
    },
  });
}

timeClaims();
// graphile-worker warns below concurrency + 1 connections (one is its own; none for LISTEN in runOnce).
const pool = new pg.Pool({ connectionString: config.url, max: config.concurrency + 2 });
// An idle connection's death must not crash the worker (graphile-worker warns when a pool has no handler).
pool.on('error', () => undefined);
pool.on('connect', (connection) => connection.on('error', () => undefined));

/**
 * Warnings and errors only: graphile-worker logs every job at `info` (oncely prints nothing per operation).
 * The parent also sets NO_LOG_SUCCESS, its switch for not formatting the per-job line at all.
 */
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`[graphile-worker ${config.name}] ${message}`);
});

export interface PaymentPayload {
  key: string;
  payment: number;
  amount: number;
}

const payWithFetch: Task = async (payload) => {
  const { key, ...body } = payload as PaymentPayload;
  const response = await fetch(`${config.api}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`payment ${key}: HTTP ${response.status}`);
  ops++;
};

/** The same POST with `http.request` (the global agent: keep-alive on Node >= 19), its body read to the end. */
const payWithNodeHttp: Task = async (payload) => {
  const { key, ...body } = payload as PaymentPayload;
  const json = JSON.stringify(body);
  const status = await new Promise<number>((resolve, reject) => {
    const request = http.request(`${config.api}/payments`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(json),
        'idempotency-key': key,
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      response.on('error', reject);
      response.on('data', () => undefined);
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.end(json);
  });
  if (status < 200 || status >= 300) throw new Error(`payment ${key}: HTTP ${status}`);
  ops++;
};

const pay = config.send === 'node:http' ? payWithNodeHttp : payWithFetch;

process.on('message', (message: { cmd: 'drain' | 'exit' }) => {
  if (message.cmd === 'exit') {
    void pool.end().then(() => process.exit(0));
    return;
  }
  void (async () => {
    claimMs = [];
    ops = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await runOnce({ pgPool: pool, concurrency: config.concurrency, noHandleSignals: true, logger, taskList: { pay } });
    const cpu = process.cpuUsage(cpu0);
    const report: DrainReport = {
      name: config.name,
      ops,
      statements: Number.NaN,
      claimMs,
      claimCallMs: [],
      passes: 1,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs: performance.now() - t0,
    };
    process.send?.(report);
  })();
});
process.send?.({ ready: true });
