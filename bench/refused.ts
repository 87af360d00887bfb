/**
 * A Node queue noticing that its API is back (issue 32, item 3): 200 queued
 * operations (a file store, one client) against a host that refuses every
 * connection for 15 s, then serves. Side by side, at the same time, each
 * against its own server: oncely's default (the host gate probes a refusing
 * host every 500–600 ms and its first success releases everyone) and
 * `budget: false` (no gate: each operation backs off alone, up to
 * `maxDelayMs`, as before the gate knew about refusals).
 *
 * Real time, real sockets: a refused connection is a real connect() to a
 * closed port on 127.0.0.1 (the client's `fetch` is pointed there until the
 * recovery time, and counts each call); after it, the reference server.
 *
 * Figures: connection attempts per second during the outage (after the
 * first second, whose attempts left before anyone knew), the most in any
 * one second, and the time from recovery to the last operation done, cut
 * into where it goes: until the probe's first success (noticing), until
 * the last operation's attempt started (its durable start written: the
 * store's share), until the last one settled (the requests and the
 * "succeeded" writes); and the process's CPU time from recovery to done,
 * which a loaded machine stretches less than the wall clock.
 * Targets, for the file store and the memory store: ≤ 2 attempts per
 * second per host, all done ≤ 2 s after recovery.
 *
 *   npx tsx bench/refused.ts [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, fileStore, memoryStore, type PolicyOptions } from '../src/node.js';
import { startReferenceServer } from '../src/testing.js';
import { emit, quick, type TargetCheck } from './lib/section.js';
import { fmtFixed, fmtInt, fmtMs, table } from './lib/stats.js';

const OPERATIONS = 200;
const OUTAGE_MS = quick ? 4_000 : 15_000;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Run {
  name: string;
  firsts: number;
  attempts: number;
  perSecondMean: number;
  perSecondMax: number;
  afterRecoveryMs: number;
  /** The first success after recovery: how long the probe took to notice. */
  noticedMs: number;
  /** The last attempt started after recovery (its start written durably before it left). */
  lastStartedMs: number;
  /** CPU time of this process (client, store and server) from recovery to the last done. */
  cpuAfterRecoveryMs: number;
  done: number;
}

type StoreKind = 'file' | 'file-exclusive' | 'memory';

async function run(name: string, policy: PolicyOptions, start: number, kind: StoreKind = 'file'): Promise<Run> {
  const server = await startReferenceServer();
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'oncely-refused-'));
  const recoveredAt = start + OUTAGE_MS;
  /** When each retry (every attempt after an operation's first) met the refusing host. */
  const refusedAt: number[] = [];
  const seen = new Set<string>();
  let firsts = 0;
  let cpuAtRecovery: NodeJS.CpuUsage | undefined;
  const store = kind === 'memory' ? memoryStore() : fileStore({ dir, exclusive: kind === 'file-exclusive' });
  const client = createClient({
    baseUrl: server.url,
    store,
    policy: { deadlineMs: 120_000, ...policy },
    fetch: (input, init) => {
      if (Date.now() >= recoveredAt) {
        cpuAtRecovery ??= process.cpuUsage();
        return fetch(input, init);
      }
      // An operation's first attempt was decided before any refusal was known: counted apart.
      const key = new Headers(input instanceof Request ? input.headers : init?.headers).get('idempotency-key') ?? '';
      if (seen.has(key)) refusedAt.push(Date.now());
      else firsts++;
      seen.add(key);
      const url = new URL(input instanceof Request ? input.url : String(input));
      url.port = String(port);
      return fetch(input instanceof Request ? new Request(url, input) : url, init);
    },
  });
  let lastStartedAt = recoveredAt;
  client.on('attempt:started', () => {
    lastStartedAt = Math.max(lastStartedAt, Date.now());
  });
  const enqueued = await Promise.all(
    Array.from({ length: OPERATIONS }, (_, i) =>
      client.enqueue({ method: 'POST', url: '/payments', key: `${name}-${i}`, json: { i } }),
    ),
  );
  const outcomes = await Promise.all(enqueued.map((e) => e.settled));
  const lastDone = Date.now();
  const cpu = process.cpuUsage(cpuAtRecovery);
  await client.close();
  // The client leaves the store open (it may be shared): closed before its directory goes.
  await store.close?.();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  const bins = new Map<number, number>();
  for (const at of refusedAt) {
    const second = Math.floor((at - start) / 1_000);
    bins.set(second, (bins.get(second) ?? 0) + 1);
  }
  return {
    name,
    firsts,
    attempts: refusedAt.length,
    perSecondMean: refusedAt.length / (OUTAGE_MS / 1_000),
    perSecondMax: Math.max(0, ...bins.values()),
    afterRecoveryMs: lastDone - recoveredAt,
    noticedMs: Math.min(...server.ledger.requests.filter((r) => r.outcome === 'effect').map((r) => r.at)) - recoveredAt,
    lastStartedMs: lastStartedAt - recoveredAt,
    cpuAfterRecoveryMs: (cpu.user + cpu.system) / 1_000,
    done: outcomes.filter((o) => o.ok).length,
  };
}

// One after the other: on a small machine, two contenders at once slow each other's file store down.
const gated = await run('gate', {}, Date.now());
const alone = await run('no-gate', { budget: false }, Date.now());
// The same gate with a memory store: what of the time after recovery is the file store's durable writes.
const inMemory = await run('gate-memory', {}, Date.now(), 'memory');
// And in a file store that one process owns (no claim file, no rename per write).
const exclusive = await run('gate-exclusive', {}, Date.now(), 'file-exclusive');
const NAMES: Record<string, string> = {
  gate: 'oncely (default: host gate probes)',
  'no-gate': 'oncely, budget: false (each backs off alone)',
  'gate-memory': 'oncely (default), memory store',
  'gate-exclusive': 'oncely (default), file store, exclusive: true',
};
const rows = [gated, alone, inMemory, exclusive].map((r) => [
  NAMES[r.name] ?? r.name,
  `${r.done}/${OPERATIONS}`,
  fmtInt(r.firsts),
  fmtInt(r.attempts),
  fmtFixed(r.perSecondMean, 1),
  fmtInt(r.perSecondMax),
  fmtMs(r.noticedMs),
  fmtMs(r.lastStartedMs),
  fmtMs(r.afterRecoveryMs),
  fmtMs(r.cpuAfterRecoveryMs),
]);
const text = [
  `${OPERATIONS} queued operations (file store), ${OUTAGE_MS / 1_000} s of refused connections, then a serving host; real time.`,
  '',
  table(
    [
      'contender',
      'done',
      'first attempts',
      'retries in the outage',
      'retries per second',
      'most in one second',
      'first success after recovery',
      'last attempt started',
      'last done after recovery',
      'CPU from recovery to done',
    ],
    rows,
  ),
  '',
  `Ratio, no gate / gate: ${fmtFixed(alone.attempts / Math.max(1, gated.attempts), 1)}× the retries during the outage, ` +
    `${fmtFixed(alone.afterRecoveryMs / Math.max(1, gated.afterRecoveryMs), 1)}× the time from recovery to done.`,
].join('\n');
const contenders: [Run, string][] = [
  [gated, 'file store'],
  [inMemory, 'memory store'],
];
const targets: TargetCheck[] = contenders.flatMap(([r, store]) => [
  {
    name: `refusing host (${store}): ≤ 2 retries (connection attempts after the first) per second`,
    measured: `${r.perSecondMax} at most`,
    met: r.perSecondMax <= 2,
  },
  {
    name: `refusing host (${store}): all done ≤ 2 s after recovery`,
    measured: `${fmtMs(r.afterRecoveryMs)} (noticed ${fmtMs(r.noticedMs)}, last started ${fmtMs(r.lastStartedMs)})`,
    met: r.done === OPERATIONS && r.afterRecoveryMs <= 2_000,
  },
]);
emit({
  id: 'refused',
  title: 'A refusing host: probed, not retried by every operation',
  text,
  targets,
  data: { gated, alone, inMemory, exclusive },
});
