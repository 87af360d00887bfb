/**
 * The server half's overhead: requests/s of a small JSON payment handler,
 * bare and guarded by `oncely/server` (memory store, every request a fresh
 * key), in the Fetch style and the Connect style, at 32 requests in flight.
 * The servers run in their own process (bench/lib/server-half-child.ts);
 * rounds interleave the contenders, and each round's guarded/bare ratio is
 * reported (ratios survive a noisy shared machine; absolute numbers do not),
 * with the server process's CPU time per request, which a busy machine
 * disturbs less than requests/s. Target: guarded ≥ 0.8× bare requests/s.
 * Standalone: not part of `npm run bench`.
 *
 *   npx tsx bench/server.ts [rounds=7] [requests=4000]
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fmtInt, fmtRatio, fmtRatioSpread, median, rotate, table } from './lib/stats.js';

const ROUNDS = Number(process.argv[2] ?? 7);
const REQUESTS = Number(process.argv[3] ?? 4_000);
const IN_FLIGHT = 32;

const child = spawn(
  process.execPath,
  ['--import', 'tsx', fileURLToPath(new URL('./lib/server-half-child.ts', import.meta.url))],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
const ports = (JSON.parse(await nextLine()) as { ports: Record<string, number> }).ports;
async function serverCpuUs(): Promise<number> {
  const line = nextLine();
  child.stdin?.write('cpu\n');
  return (JSON.parse(await line) as { cpuUs: number }).cpuUs;
}

const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
let keys = 0;
const body = JSON.stringify({ amount: 4800, currency: 'EUR', customer: 'cus_42' });

function post(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/payments',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `k${++keys}`, 'X-Account': 'acct' },
      },
      (res) => {
        if (res.statusCode !== 201) reject(new Error(`status ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function run(port: number, requests: number): Promise<{ rps: number; cpuUs: number }> {
  let left = requests;
  const cpuBefore = await serverCpuUs();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await post(port);
    }),
  );
  const rps = (requests / (performance.now() - started)) * 1000;
  return { rps, cpuUs: ((await serverCpuUs()) - cpuBefore) / requests };
}

const names = Object.keys(ports);
for (const name of names) await run(ports[name] as number, 1_000); // warm-up
const rps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of rotate(names, round)) {
    const result = await run(ports[name] as number, REQUESTS);
    rps[name]?.push(result.rps);
    cpu[name]?.push(result.cpuUs);
  }
}
child.kill();
agent.destroy();

const ratios = (of: Record<string, number[]>, top: string, bottom: string) =>
  (of[top] ?? []).map((value, i) => value / ((of[bottom] ?? [])[i] ?? Number.NaN));
const rows = [
  ['Fetch style', 'fetch-bare', 'fetch-guarded'],
  ['Connect style', 'connect-bare', 'connect-guarded'],
].map(([label, bare, guarded]) => {
  const r = ratios(rps, guarded as string, bare as string);
  const c = ratios(cpu, guarded as string, bare as string);
  return [
    label as string,
    fmtInt(median(rps[bare as string] ?? [])),
    fmtInt(median(rps[guarded as string] ?? [])),
    fmtRatio(median(r)),
    fmtRatioSpread(r),
    `${fmtInt(median(cpu[bare as string] ?? []))} / ${fmtInt(median(cpu[guarded as string] ?? []))}`,
    fmtRatio(median(c)),
  ];
});
console.log(
  `oncely/server overhead, ${IN_FLIGHT} in flight, ${ROUNDS} rounds × ${REQUESTS} fresh requests (node ${process.version})`,
);
console.log(
  table(
    [
      '',
      'bare req/s',
      'guarded req/s',
      'guarded / bare',
      'per-round ratios',
      'server CPU µs/req bare / guarded',
      'CPU ratio',
    ],
    rows,
  ),
);
