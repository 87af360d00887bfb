/**
 * What `instrument(client)` costs per request: a small JSON POST to a
 * `node:http` server on 127.0.0.1 (in its own process), sequentially and at
 * 32 in flight, with the memory store. Contenders, interleaved in one
 * process (every round runs each once, in a rotated order):
 *
 * - oncely, not instrumented (the baseline);
 * - instrumented with the API alone (no SDK registered: what oncely's
 *   users who do not use OpenTelemetry pay);
 * - instrumented with the SDK (sdk-trace-base, a batch processor and an
 *   exporter that drops the spans: the cost of making them, not of shipping);
 * - the same with `propagate: true` (traceparent injected per attempt).
 *
 * The context manager (async hooks) and the W3C propagator are registered
 * for every contender, as in an app that set up OpenTelemetry. Reported:
 * medians over rounds of req/s and of this process's CPU time per request
 * (steadier on a busy machine), and of each round's ratios to the baseline.
 *
 *   npx tsx bench/opentelemetry.ts [--quick] [--rounds=N]
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createClient, type OncelyClient } from '../src/node.js';
import { instrument } from '../src/opentelemetry.js';
import { startChildServer } from './lib/json-server.js';
import { emit, quick, roundsOption } from './lib/section.js';
import { fmtInt, fmtRatio, fmtRatioSpread, median, rotate, table } from './lib/stats.js';

const payload = { amount: 4800, currency: 'EUR', customer: 'cus_42', description: 'order 1234' };
const ROUNDS = roundsOption(quick ? 2 : 7);
const DURATION_MS = quick ? 300 : 1_500;
const CONCURRENCIES = [1, 32];

/** Spans made and dropped: the cost of tracing without the cost of shipping. */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};

/** Per round: req/s and CPU µs per request, each also as a ratio to the uninstrumented client's. */
interface Figures {
  rps: number[];
  ratio: number[];
  cpuUs: number[];
  cpuRatio: number[];
}

interface Contender {
  name: string;
  client: OncelyClient;
}

async function main(): Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping)] });
  const tracer = provider.getTracer('bench');
  const server = await startChildServer();
  const url = `${server.url}/payments`;
  const contenders: Contender[] = [
    { name: 'oncely, not instrumented', client: createClient() },
    { name: 'instrumented, API alone (no SDK)', client: createClient() },
    { name: 'instrumented, SDK', client: createClient() },
    { name: 'instrumented, SDK, propagate', client: createClient() },
  ];
  instrument(contenders[1]?.client as OncelyClient);
  instrument(contenders[2]?.client as OncelyClient, { tracer });
  instrument(contenders[3]?.client as OncelyClient, { tracer, propagate: true });

  const rows: string[][] = [];
  const data: Record<string, Record<string, Figures>> = {};
  for (const inFlight of CONCURRENCIES) {
    const byName: Record<string, Figures> = {};
    for (const c of contenders) byName[c.name] = { rps: [], ratio: [], cpuUs: [], cpuRatio: [] };
    // Warm-up, not measured: the JIT and the connection pool.
    for (const c of contenders) await measure(c.client, url, DURATION_MS / 3, inFlight);
    for (let round = 0; round < ROUNDS; round++) {
      const runs: Record<string, Run> = {};
      for (const c of rotate(contenders, round)) runs[c.name] = await measure(c.client, url, DURATION_MS, inFlight);
      const baseline = runs[contenders[0]?.name as string] as Run;
      for (const c of contenders) {
        const run = runs[c.name] as Run;
        const figures = byName[c.name] as Figures;
        figures.rps.push(run.rps);
        figures.ratio.push(run.rps / baseline.rps);
        figures.cpuUs.push(run.cpuUs);
        figures.cpuRatio.push(run.cpuUs / baseline.cpuUs);
      }
    }
    for (const c of contenders) {
      const figures = byName[c.name] as Figures;
      rows.push([
        c.name,
        String(inFlight),
        fmtInt(median(figures.rps)),
        fmtRatio(median(figures.ratio)),
        fmtInt(median(figures.cpuUs)),
        fmtRatio(median(figures.cpuRatio)),
        fmtRatioSpread(figures.cpuRatio),
      ]);
    }
    data[`c${inFlight}`] = byName;
  }
  await Promise.all(contenders.map((c) => c.client.close()));
  await provider.shutdown();
  await server.close();
  emit({
    id: 'opentelemetry',
    title: 'OpenTelemetry: what instrument(client) costs per request',
    text: `${table(['contender', 'in flight', 'req/s', 'req/s vs not instr.', 'CPU µs/req', 'CPU vs not instr.', 'CPU ratio spread'], rows)}\n\n${ROUNDS} rounds of ${DURATION_MS} ms per contender and concurrency, interleaved; memory store; server in its own process.`,
    targets: [],
    data,
  });
}

interface Run {
  rps: number;
  /** This process's CPU time per request (user + system), in µs: steadier than req/s on a busy machine. */
  cpuUs: number;
}

/** Sends with `inFlight` workers for `durationMs`. */
async function measure(client: OncelyClient, url: string, durationMs: number, inFlight: number): Promise<Run> {
  let sent = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + durationMs;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      await client.send({ method: 'POST', url, json: payload });
      sent++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const cpu = process.cpuUsage(cpu0);
  return { rps: (sent / (performance.now() - t0)) * 1000, cpuUs: (cpu.user + cpu.system) / sent };
}

await main();
