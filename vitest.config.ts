import { defineConfig } from 'vitest/config';

/** `npm test`: everything that needs nothing but Node and npm. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that need a server we do not ship run in `npm run test:integration`.
    exclude: ['test/integration/**', 'node_modules/**'],
    // Hang guards, far above any run time: the suite must pass on a loaded machine (CI runs it
    // beside two CPU burners). Waits inside tests use HANG_MS of test/support/hang-guard.ts, below this.
    testTimeout: 15 * 60_000,
    hookTimeout: 15 * 60_000,
    // Each file opens its own DuckDB; two workers match the two cores of CI.
    pool: 'forks',
    maxWorkers: 2,
  },
});
