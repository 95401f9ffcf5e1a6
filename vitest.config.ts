import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file opens its own DuckDB; two workers match the two cores of CI.
    pool: 'forks',
    maxWorkers: 2,
  },
});
