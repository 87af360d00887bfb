import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test tiers, one vitest project each (`vitest run --project <name>`; the npm
 * scripts `test:unit`, `test:integration`, `test:browser`, `test:crash`).
 * A file's tier follows from its path, never from its contents:
 *
 * - `unit`: pure code on fake time. No sockets, files or child processes
 *   (test/helpers/unit-guard.ts makes them throw) and no global state left
 *   behind (files share worker processes). The whole tier must finish in
 *   under 20 s.
 * - `browser`: real Chromium driven by playwright-core (test/browser/**).
 * - `crash`: SIGKILLed child processes, races, soak-lite (test/crash/**).
 * - `integration`: everything else: real sockets (the reference server),
 *   files (file store, CLI), child processes (examples), the packed package.
 *   A new test file lands here unless its path puts it in another tier.
 */
const UNIT = [
  'test/options.test.ts',
  'test/flow/**/*.test.ts',
  'test/policy/**/*.test.ts',
  // fake-indexeddb and fake Web Locks: in memory. (client.test.ts starts a reference server: integration.)
  'test/browser-unit/{drain-loop,leader,persistence,subscribe}.test.ts',
  'test/store/{memory,indexeddb}.test.ts',
];
const BROWSER = ['test/browser/**/*.test.ts'];
const CRASH = ['test/crash/**/*.test.ts'];

export default defineConfig({
  test: {
    // Real servers and child processes run in these tests; never fake timers globally.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          setupFiles: ['test/helpers/unit-guard.ts'],
          // Pure tests share their worker processes (a fresh process per file costs more than all unit
          // tests together); stubs are undone after every test so no file can leak into the next.
          isolate: false,
          unstubGlobals: true,
          unstubEnvs: true,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT, ...BROWSER, ...CRASH],
        },
      },
      { extends: true, test: { name: 'browser', include: BROWSER } },
      { extends: true, test: { name: 'crash', include: CRASH } },
    ],
  },
});
