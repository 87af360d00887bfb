/**
 * 6. Memory: 100,000 requests through one client at 32 in flight; the heap
 * after a full GC is sampled every 20,000 requests. Growth per request is
 * the least-squares slope over the samples after the first (which carries
 * warm-up: JIT code, connection pool, lazily built tables).
 *
 * The memory store keeps every finished record until its `retainMs`; here
 * the client uses `policy: { retainMs: 0 }` and calls `client.sweep()` every
 * 1,000 requests, so what is measured is the engine, not retained records.
 * Bare fetch, bare ky and oncely with one long-lived caller `signal` run
 * shorter loops first, for reference.
 *
 *   node --expose-gc --import tsx bench/memory.ts [--quick]
 */
import ky from 'ky';
import { createClient } from '../src/node.js';
import { startChildServer } from './lib/json-server.js';
import { emit, quick } from './lib/section.js';
import { fmtFixed, fmtInt, table } from './lib/stats.js';

const payload = { amount: 4800, currency: 'EUR', customer: 'cus_42', description: 'order 1234' };
const IN_FLIGHT = 32;
const SWEEP_EVERY = 1_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (node --expose-gc --import tsx bench/memory.ts)');

async function heapAfterGc(): Promise<number> {
  // Several full collections with pauses between: finalizers (undici keeps
  // a FinalizationRegistry for request signals) and socket callbacks run
  // between passes. The lowest reading is the live heap.
  let lowest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 6; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
    lowest = Math.min(lowest, process.memoryUsage().heapUsed);
  }
  return lowest;
}

interface Samples {
  name: string;
  requests: number[];
  heapBytes: number[];
  bytesPerRequest: number;
  seconds: number;
}

/** Least-squares slope of y over x. */
function slope(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((x[i] as number) - mx) * ((y[i] as number) - my);
    den += ((x[i] as number) - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

async function run(
  name: string,
  total: number,
  every: number,
  send: () => Promise<unknown>,
  between?: () => Promise<unknown>,
): Promise<Samples> {
  const requests: number[] = [];
  const heapBytes: number[] = [];
  const t0 = performance.now();
  let sent = 0;
  while (sent < total) {
    const stop = sent + every;
    const worker = async (): Promise<void> => {
      while (sent < stop) {
        sent++;
        await send();
        if (between !== undefined && sent % SWEEP_EVERY === 0) await between();
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    await between?.();
    requests.push(sent);
    heapBytes.push(await heapAfterGc());
  }
  // The first sample includes warm-up; the slope is taken over the rest.
  const bytesPerRequest = slope(requests.slice(1), heapBytes.slice(1));
  return { name, requests, heapBytes, bytesPerRequest, seconds: (performance.now() - t0) / 1000 };
}

async function main(): Promise<void> {
  const server = await startChildServer();
  const url = `${server.url}/payments`;
  const total = quick ? 10_000 : 100_000;
  const every = quick ? 2_000 : 20_000;
  const side = quick ? 4_000 : 12_000;
  const sideEvery = quick ? 1_000 : 3_000;
  const results: Samples[] = [];

  results.push(
    await run('bare fetch', side, sideEvery, async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      return response.json();
    }),
  );
  const api = ky.create({ retry: 0 });
  results.push(await run('bare ky (retry 0)', side, sideEvery, () => api.post(url, { json: payload }).json()));

  // A caller's signal that outlives every request (e.g. a page's or a job's):
  // the pitfall of `AbortSignal.any()` over a long-lived parent on Node 20.
  const longLived = new AbortController();
  const withSignal = createClient({ policy: { retainMs: 0 } });
  results.push(
    await run(
      'oncely, with one long-lived caller signal',
      side,
      sideEvery,
      () => withSignal.send({ method: 'POST', url, json: payload, signal: longLived.signal }),
      () => withSignal.sweep(),
    ),
  );
  await withSignal.close();

  const client = createClient({ policy: { retainMs: 0 } });
  results.push(
    await run(
      'oncely, memory store (retainMs 0, sweep every 1,000)',
      total,
      every,
      () => client.send({ method: 'POST', url, json: payload }),
      () => client.sweep(),
    ),
  );
  const left = (await client.list()).length;
  await client.close();
  await server.close();

  const oncely = results[results.length - 1] as Samples;
  const rows = results.map((r) => [
    r.name,
    fmtInt(r.requests[r.requests.length - 1] ?? 0),
    r.heapBytes.map((b) => fmtFixed(b / 1024 / 1024, 1)).join(' → '),
    fmtFixed(r.bytesPerRequest, 1),
    fmtFixed(r.seconds, 0),
  ]);
  emit({
    id: 'memory',
    title: '6. Memory: heap after GC while requests flow (32 in flight)',
    text: [
      table(['contender', 'requests', 'heap MB after GC, at each sample', 'bytes/request', 's'], rows),
      '',
      `Samples every ${fmtInt(every)} requests for the 100,000-request run, every ${fmtInt(sideEvery)} for the shorter reference runs. bytes/request: least-squares slope of the samples after the first (warm-up). Records left in the store at the end: ${left}.`,
    ].join('\n'),
    targets: [
      {
        name: 'oncely heap growth ≤ 10 bytes/request over 100,000 requests',
        measured: `${fmtFixed(oncely.bytesPerRequest, 1)} B/request`,
        met: oncely.bytesPerRequest <= 10,
      },
    ],
    data: { inFlight: IN_FLIGHT, sweepEvery: SWEEP_EVERY, results, recordsLeft: left },
  });
}

await main();
