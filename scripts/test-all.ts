/**
 * `npm test`: every tier of the suite, one after another, each run even when
 * an earlier one failed, then one summary. Exits non-zero when any failed.
 *
 *   npm test                       # everything
 *   npm test -- unit integration   # only the tiers named
 *   npm test -- --list             # the tiers, in order
 *
 * An `&&` chain stopped at the first red tier and hid the others: one
 * failing integration test kept the browser, crash and Node 22 tiers from
 * running at all, so a CI log showed one failure where there were three.
 *
 * The last two tiers run the file store's tests again with the machine
 * booted 60 s and 40 days ago (test/helpers/machine.ts): the store judges
 * files by the boot time, and a suite green only for the boot time its
 * machine happens to have is red on the next one.
 */
import { runTiers, type Tier } from './run-tiers.js';

const BOOT_TESTS = 'vitest run --project integration test/store/file test/cli/';

const TIERS: readonly Tier[] = [
  { name: 'build', command: 'npm run build' },
  { name: 'typecheck', command: 'npm run typecheck' },
  { name: 'lint', command: 'npm run lint' },
  { name: 'unit', command: 'npm run test:unit' },
  { name: 'integration', command: 'npm run test:integration' },
  { name: 'browser', command: 'npm run test:browser' },
  { name: 'crash', command: 'npm run test:crash' },
  { name: 'node22', command: 'npm run test:node22' },
  { name: 'booted-60s-ago', command: `npx ${BOOT_TESTS}`, env: { ONCELY_TEST_UPTIME_MS: '60000' } },
  { name: 'booted-40d-ago', command: `npx ${BOOT_TESTS}`, env: { ONCELY_TEST_UPTIME_MS: String(40 * 86_400_000) } },
];

function selected(args: readonly string[]): readonly Tier[] {
  if (args.length === 0) return TIERS;
  const unknown = args.filter((name) => !TIERS.some((tier) => tier.name === name));
  if (unknown.length > 0) {
    console.error(`unknown tier(s): ${unknown.join(', ')}; the tiers are: ${TIERS.map((t) => t.name).join(', ')}`);
    process.exit(2);
  }
  return TIERS.filter((tier) => args.includes(tier.name));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--list')) {
    for (const tier of TIERS) console.log(`${tier.name.padEnd(16)} ${tier.command}`);
    return;
  }
  process.exitCode = (await runTiers(selected(args))).ok ? 0 : 1;
}

await main();
