/**
 * 1. Overhead per request: a small JSON POST to a `node:http` server on
 * 127.0.0.1 (in its own process), sequentially and at 32 in flight.
 *
 * Contenders run in this one process, interleaved: every round runs each of
 * them once (in a rotated order) for the same number of requests. Reported:
 * medians over rounds, and the median over rounds of each round's ratio to
 * the baseline (ratios survive a noisy shared machine; absolute numbers do not).
 *
 *   npx tsx bench/overhead.ts [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ky from 'ky';
import { defaultTransport } from '../src/flow/transport/transport.js';
import { createClient, fileStore, type OncelyClient } from '../src/node.js';
import { type JournalOnlyStore, journalOnlyStore } from './lib/journal-only-store.js';
import { startChildServer } from './lib/json-server.js';
import { emit, quick, roundsOption, type TargetCheck } from './lib/section.js';
import { fmtFixed, fmtInt, fmtRatio, fmtRatioSpread, median, rotate, table } from './lib/stats.js';

/** Unmeasured sending per contender before the rounds of each concurrency (see the warm-up below). */
const WARM_UP_MS = 3_000;

/** The baseline of target 1, and the same told `redirect: 'error'` (reported beside it). */
const BARE_KY = 'bare ky (retry 0)';
const BARE_KY_NO_REDIRECT = "bare ky (retry 0), redirect 'error'";
/** The diagnostic contender that bounds target 3 (see lib/journal-only-store.ts). */
const JOURNAL_ONLY = 'diag: memory store + journal lines only';
/** The file store owned by one process (`exclusive: true`): record files written behind the journal. */
const FILE_EXCLUSIVE = 'oncely, file store (exclusive)';

const payload = { amount: 4800, currency: 'EUR', customer: 'cus_42', description: 'order 1234' };

interface Contender {
  id: string;
  name: string;
  /** Called before each measured run (not timed). */
  setUp(): Promise<() => Promise<unknown>>;
  /** Called after each run (not timed). */
  tearDown?(): Promise<void>;
  /** Called after the last run of a concurrency (not timed). */
  dispose?(): Promise<void>;
}

interface RunResult {
  rps: number;
  latencyMs: number;
  cpuUsPerRequest: number;
  requests: number;
}

/**
 * Sends with `inFlight` workers until `durationMs` has passed (and at least
 * `minRequests` were sent): a slow contender gets as much time as a fast one.
 */
async function measure(
  send: () => Promise<unknown>,
  durationMs: number,
  inFlight: number,
  minRequests = inFlight * 4,
): Promise<RunResult> {
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + durationMs;
  const worker = async (): Promise<void> => {
    while (performance.now() < until || latencies.length < minRequests) {
      const start = performance.now();
      await send();
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    rps: (latencies.length / elapsedMs) * 1000,
    latencyMs: median(latencies),
    cpuUsPerRequest: (cpu.user + cpu.system) / latencies.length,
    requests: latencies.length,
  };
}

async function main(): Promise<void> {
  const server = await startChildServer();
  const url = `${server.url}/payments`;
  const api = ky.create({ retry: 0 });
  const transport = defaultTransport(() => globalThis.fetch);
  // Each oncely contender keeps one client (and store) for all rounds of a
  // concurrency, as an application does: a store opened fresh for every
  // 400 ms run would mostly measure opening it (directories created and
  // fsynced, the first journal segment).
  let journalDir: string | undefined;
  let memoryClient: OncelyClient | undefined;
  let journalClient: OncelyClient | undefined;
  let journalStore: JournalOnlyStore | undefined;

  /** An oncely client on a file store of its own, kept for all rounds of a concurrency (see above). */
  const fileContender = (id: string, name: string, options: { exclusive?: boolean }): Contender => {
    let dir: string | undefined;
    let client: OncelyClient | undefined;
    // A client leaves open a store it was given: closed here before its directory goes.
    let store: ReturnType<typeof fileStore> | undefined;
    return {
      id,
      name,
      setUp: async () => {
        if (client === undefined) {
          dir = mkdtempSync(join(tmpdir(), 'oncely-bench-'));
          store = fileStore({ dir, ...options });
          client = createClient({ store });
        }
        const c = client;
        return () => c.send({ method: 'POST', url, json: payload });
      },
      dispose: async () => {
        await client?.close();
        await store?.close();
        client = undefined;
        store = undefined;
        if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
        dir = undefined;
      },
    };
  };

  const contenders: Contender[] = [
    {
      id: 'fetch',
      name: 'bare fetch',
      setUp: async () => async () => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(payload),
        });
        return response.json();
      },
    },
    {
      // The floor on Node: what oncely/node sends with (node:http's global agent, keep-alive), bare.
      id: 'node-http',
      name: 'bare node:http',
      setUp: async () => () => postWithNodeHttp(url, JSON.stringify(payload)),
    },
    {
      id: 'ky',
      name: BARE_KY,
      setUp: async () => () => api.post(url, { json: payload }).json(),
    },
    {
      // The second baseline: bare ky told never to follow a redirect, as oncely tells Node's fetch. The fetch
      // algorithm then skips its copy of the request body (see BENCHMARKS.md, "The redirect mode"), a saving
      // any ky user can have with one option: oncely is reported against it too, so that saving is not
      // counted as oncely's own.
      id: 'ky-no-redirect',
      name: BARE_KY_NO_REDIRECT,
      setUp: async () => () => api.post(url, { json: payload, redirect: 'error' }).json(),
    },
    {
      // Diagnostic: what ky does underneath (a Request, then fetch(request)).
      id: 'fetch-request',
      name: 'diag: fetch(new Request(…))',
      setUp: async () => async () => {
        const controller = new AbortController();
        const request = new Request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(payload),
          signal: controller.signal,
        });
        return (await fetch(request)).json();
      },
    },
    {
      // Diagnostic: oncely's transport alone (the request built, then fetch(url, init) with body and signal).
      id: 'transport',
      name: "diag: oncely's transport alone",
      setUp: async () => async () => {
        const controller = new AbortController();
        const { bytes } = await transport(
          {
            method: 'POST',
            url,
            headers: { 'content-type': 'application/json' },
            body: { encoding: 'json', text: JSON.stringify(payload) },
          },
          { signal: controller.signal, timeoutMs: 30_000, maxResponseBytes: 1 << 20 },
        );
        return JSON.parse(new TextDecoder().decode(bytes));
      },
    },
    {
      id: 'memory',
      name: 'oncely, memory store',
      setUp: async () => {
        memoryClient ??= createClient();
        const c = memoryClient;
        return () => c.send({ method: 'POST', url, json: payload });
      },
      dispose: async () => {
        await memoryClient?.close();
        memoryClient = undefined;
      },
    },
    fileContender('file', 'oncely, file store', {}),
    // One process owns the directory: writes are durable by their journal line, files written behind.
    fileContender('file-exclusive', FILE_EXCLUSIVE, { exclusive: true }),
    {
      // Diagnostic: the ceiling of records that live in the journal (BENCHMARKS.md, target 3): the memory
      // store plus one journal line per write, on the same disk, with no record files (lib/journal-only-store.ts).
      id: 'journal-only',
      name: JOURNAL_ONLY,
      setUp: async () => {
        if (journalClient === undefined) {
          journalDir = mkdtempSync(join(tmpdir(), 'oncely-bench-'));
          journalStore = journalOnlyStore(journalDir);
          journalClient = createClient({ store: journalStore });
        }
        const c = journalClient;
        return () => c.send({ method: 'POST', url, json: payload });
      },
      dispose: async () => {
        await journalClient?.close();
        await journalStore?.close();
        journalClient = undefined;
        journalStore = undefined;
        if (journalDir !== undefined) rmSync(journalDir, { recursive: true, force: true });
        journalDir = undefined;
      },
    },
  ];

  const only = process.argv
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  if (only !== undefined) contenders.splice(0, contenders.length, ...contenders.filter((c) => only.includes(c.id)));
  const rounds = quick ? 2 : roundsOption(11);
  const settings = [
    { inFlight: 1, durationMs: quick ? 150 : 300 },
    { inFlight: 32, durationMs: quick ? 200 : 400 },
  ];
  const results: Record<string, Record<string, RunResult[]>> = {};
  for (const { inFlight, durationMs } of settings) {
    const byName: Record<string, RunResult[]> = {};
    results[`c${inFlight}`] = byName;
    // Warm-up: JIT, connection pool, first file-store directory. Long enough for the JIT to be done with
    // every contender: with one 300 ms window (~300 requests) each, the per-window CPU of the contenders
    // with more JavaScript was still falling through the 5th to 8th measured round.
    for (const c of contenders) {
      const send = await c.setUp();
      await measure(send, quick ? durationMs : WARM_UP_MS, inFlight);
      await c.tearDown?.();
    }
    for (let round = 0; round < rounds; round++) {
      for (const c of rotate(contenders, round)) {
        const send = await c.setUp();
        const run = await measure(send, durationMs, inFlight);
        await c.tearDown?.();
        const runs = byName[c.name] ?? [];
        runs.push(run);
        byName[c.name] = runs;
      }
    }
    for (const c of contenders) await c.dispose?.();
  }
  await server.close();

  // Per-round ratios (the same round index ran every contender close together).
  const roundRatios = (
    key: string,
    name: string,
    base: string,
    of: (run: RunResult) => number = (run) => run.rps,
  ): number[] => {
    const runs = results[key]?.[name] ?? [];
    const bases = results[key]?.[base] ?? [];
    return runs.map((r, i) => of(r) / (bases[i] === undefined ? Number.NaN : of(bases[i])));
  };
  const ratio = (key: string, name: string, base: string): number => median(roundRatios(key, name, base));
  /** A check's figure: the median of the per-round ratios, and how they spread over the rounds. */
  const ratioWithSpread = (key: string, name: string, base: string): string =>
    `${fmtRatio(ratio(key, name, base))} (${fmtRatioSpread(roundRatios(key, name, base))})`;
  const rows: string[][] = [];
  const summary: Record<string, unknown> = {};
  for (const { inFlight } of settings) {
    const key = `c${inFlight}`;
    for (const c of contenders) {
      const runs = results[key]?.[c.name] ?? [];
      const row = {
        rps: median(runs.map((r) => r.rps)),
        latencyMs: median(runs.map((r) => r.latencyMs)),
        cpuUsPerRequest: median(runs.map((r) => r.cpuUsPerRequest)),
        vsFetch: ratio(key, c.name, 'bare fetch'),
        vsKy: ratio(key, c.name, BARE_KY),
        vsKyNoRedirect: ratio(key, c.name, BARE_KY_NO_REDIRECT),
      };
      summary[`${key} ${c.name}`] = row;
      rows.push([
        c.name,
        String(inFlight),
        fmtInt(row.rps),
        fmtFixed(row.latencyMs, 3),
        fmtInt(row.cpuUsPerRequest),
        fmtRatio(row.vsFetch),
        fmtRatio(row.vsKy),
        fmtRatio(row.vsKyNoRedirect),
      ]);
    }
  }
  const cpu = (key: string, name: string): number => {
    const runs = results[key]?.[name] ?? [];
    return median(runs.map((r) => r.cpuUsPerRequest));
  };
  /** Per-round ratios of client CPU per request (lower is better). */
  const cpuRoundRatios = (key: string, name: string, base: string): number[] =>
    roundRatios(key, name, base, (run) => run.cpuUsPerRequest);
  /** Their median over rounds. */
  const cpuRatio = (key: string, name: string, base: string): number => median(cpuRoundRatios(key, name, base));
  const label = (inFlight: number): string => (inFlight === 1 ? 'sequential' : `${inFlight} in flight`);
  const has = (name: string): boolean => contenders.some((c) => c.name === name);
  const memory = 'oncely, memory store';
  const file = 'oncely, file store';
  const bareKy = BARE_KY;
  const bareKyNoRedirect = BARE_KY_NO_REDIRECT;
  const journalOnly = JOURNAL_ONLY;
  const targets: TargetCheck[] = [];
  if (has(memory) && has(bareKy)) {
    for (const { inFlight } of settings) {
      const value = ratio(`c${inFlight}`, memory, bareKy);
      // Against bare ky (the target), and against bare ky with `redirect: 'error'` beside it.
      const besideNoRedirect = has(bareKyNoRedirect)
        ? `; ${ratioWithSpread(`c${inFlight}`, memory, bareKyNoRedirect)} × bare ky with redirect 'error'`
        : '';
      targets.push({
        name: `oncely (memory store) ≥ 1.0× bare ky requests/s, ${label(inFlight)} (also reported against bare ky with redirect 'error')`,
        measured: `${ratioWithSpread(`c${inFlight}`, memory, bareKy)} × bare ky${besideNoRedirect}`,
        met: value >= 1.0,
        goal: 'overhead',
      });
    }
    // CPU per request at both concurrencies: met only when both are.
    const cpuRatios = settings.map(({ inFlight }) => ({ inFlight, value: cpuRatio(`c${inFlight}`, memory, bareKy) }));
    targets.push({
      name: 'oncely (memory store) client CPU per request ≤ 1.0× bare ky',
      measured: cpuRatios
        .map(
          ({ inFlight, value }) =>
            `${fmtRatio(value)} ${label(inFlight)} (${fmtInt(cpu(`c${inFlight}`, memory))} vs ${fmtInt(cpu(`c${inFlight}`, bareKy))} µs; ${fmtRatioSpread(cpuRoundRatios(`c${inFlight}`, memory, bareKy))}${has(bareKyNoRedirect) ? `; ${fmtRatio(cpuRatio(`c${inFlight}`, memory, bareKyNoRedirect))} × bare ky with redirect 'error', ${fmtInt(cpu(`c${inFlight}`, bareKyNoRedirect))} µs` : ''})`,
        )
        .join(', '),
      met: cpuRatios.every(({ value }) => value <= 1.0),
      goal: 'overhead',
    });
  }
  // The durable store end to end, against the memory store of the same rounds: shared (processes write the same
  // directory) and exclusive (one process owns it), each its own row.
  const fileTargets = [
    { inFlight: 32, min: 0.8 },
    { inFlight: 1, min: 0.35 },
  ];
  for (const [contender, what] of [
    [file, 'file store'],
    [FILE_EXCLUSIVE, 'file store, exclusive'],
  ] as const) {
    if (!has(contender) || !has(memory)) continue;
    for (const { inFlight, min } of fileTargets) {
      if (!settings.some((s) => s.inFlight === inFlight)) continue;
      const value = ratio(`c${inFlight}`, contender, memory);
      // The ceiling of one durable append per write (BENCHMARKS.md, target 3), beside the figure it bounds.
      const ceiling = has(journalOnly) ? ratio(`c${inFlight}`, journalOnly, memory) : undefined;
      targets.push({
        name: `oncely (${what}) ≥ ${min}× oncely (memory store) requests/s, ${label(inFlight)}`,
        measured:
          ceiling === undefined
            ? ratioWithSpread(`c${inFlight}`, contender, memory)
            : `${ratioWithSpread(`c${inFlight}`, contender, memory)}; journal lines alone, no record files: ${fmtRatio(ceiling)}`,
        met: value >= min,
        goal: 'durability',
      });
    }
  }
  emit({
    id: 'overhead',
    title: '1. Overhead per request (small JSON POST, node:http on 127.0.0.1)',
    text: [
      table(
        [
          'contender',
          'in flight',
          'req/s',
          'median ms',
          'client CPU µs/req',
          '× bare fetch',
          '× bare ky',
          "× bare ky, redirect 'error'",
        ],
        rows,
      ),
      '',
      `${rounds} interleaved rounds per concurrency; req/s, latency and CPU are medians over rounds, ratios are medians of per-round req/s ratios. The server runs in its own process; CPU is the client process only.`,
    ].join('\n'),
    targets,
    data: { rounds, settings, summary, runs: results },
  });
}

await main();

/** A JSON POST with `http.request` through the global agent, its JSON answer parsed. */
function postWithNodeHttp(url: string, json: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('error', reject);
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    request.end(json);
  });
}
