import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real servers and child processes run in these tests; never fake timers globally.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
