/**
 * What `oncely/tanstack-query` adds per mutation: sequential JSON POSTs to a
 * `node:http` server on 127.0.0.1 (in its own process), each through
 * @tanstack/query-core's MutationObserver, three ways, interleaved in one
 * process (every round runs each contender once, in a rotated order):
 *
 * - TanStack + fetch: what an app without oncely does (no key, no store);
 * - oncely `client.send` alone (memory store);
 * - TanStack + `mutationOptions(client)`: the adapter (memory store).
 *
 * Reported: the median per-mutation time over rounds, and the median of each
 * round's ratio to oncely alone (the adapter's own cost) and to TanStack +
 * fetch (ratios survive a noisy shared machine; absolute numbers do not).
 *
 *   npx tsx bench/tanstack-query.ts [--quick]
 */
import { MutationObserver, QueryClient } from '@tanstack/query-core';
import { createClient } from '../src/index.js';
import { mutationOptions } from '../src/tanstack-query.js';
import { startChildServer } from './lib/json-server.js';
import { fmtFixed, fmtRatio, fmtRatioSpread, median, rotate, table } from './lib/stats.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 15;
const PER_ROUND = quick ? 50 : 300;
const payload = { amount: 4800, currency: 'EUR', customer: 'cus_42', description: 'order 1234' };

const server = await startChildServer();
const url = `${server.url}/payments`;
const queryClient = new QueryClient();
const client = createClient({ baseUrl: server.url });

const viaFetch = new MutationObserver(queryClient, {
  mutationFn: async (body: typeof payload) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.json() as Promise<unknown>;
  },
  retry: 0,
});
const viaAdapter = new MutationObserver(
  queryClient,
  mutationOptions<typeof payload>(client, { method: 'POST', url: '/payments' }),
);

const contenders: Record<string, () => Promise<unknown>> = {
  'TanStack + fetch (no key, no store)': () => viaFetch.mutate(payload),
  'oncely client.send alone': () => client.send({ method: 'POST', url: '/payments', json: payload }),
  'TanStack + mutationOptions (the adapter)': () => viaAdapter.mutate(payload),
};
const names = Object.keys(contenders);
const [FETCH, ALONE, ADAPTER] = names as [string, string, string];

async function run(name: string): Promise<number> {
  const fn = contenders[name] as () => Promise<unknown>;
  const started = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await fn();
  return (performance.now() - started) / PER_ROUND;
}

// Warm-up: the JIT, the sockets, the client's lazily loaded parts.
for (const name of names) await run(name);

const perRound: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const name of rotate(names, round)) perRound[name]?.push(await run(name));
}
const ratios = (of: string, to: string): number[] =>
  (perRound[of] ?? []).map((ms, i) => ms / (perRound[to]?.[i] ?? Number.NaN));

console.log(`oncely/tanstack-query: ${ROUNDS} rounds × ${PER_ROUND} sequential mutations per contender\n`);
console.log(
  table(
    ['contender', 'ms per mutation (median)', '× oncely alone', '× TanStack + fetch'],
    names.map((name) => [
      name,
      fmtFixed(median(perRound[name] ?? []), 3),
      fmtRatio(median(ratios(name, ALONE))),
      fmtRatio(median(ratios(name, FETCH))),
    ]),
  ),
);
console.log(`\nThe adapter over oncely alone: ${fmtRatioSpread(ratios(ADAPTER, ALONE))}`);

queryClient.clear();
await client.close();
await server.close();
