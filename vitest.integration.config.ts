import { defineConfig } from 'vitest/config';

/**
 * `npm run test:integration`: tests against real servers we do not ship (redis-server,
 * ClickHouse, Chromium). Each test file starts the servers it needs on loopback ports and fails
 * with a one-line install hint when one is missing (test/integration/support/servers.ts).
 */
export default defineConfig({
  test: {
    include: ['test/integration/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
