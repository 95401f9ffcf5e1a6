import { defineConfig } from 'vitest/config';

/**
 * The tiers of `npm test` (docs/development.md, "Tests in tiers"), each a vitest project of its
 * own (`vitest run --project <tier>`, `npm run test:<tier>`). Every file of test/ but
 * test/integration/ is in exactly one, named here as a path (test/test-tiers.test.ts holds it):
 * a new file is added where what it does puts it.
 */
const TIERS = {
  /**
   * In process, in memory or over a few small files, a few seconds a file: no child process, no
   * server on a socket, no managed storage or compaction on disk, nothing killed or damaged.
   */
  unit: [
    'api',
    'architecture',
    'bigquery-print',
    'bigquery-refusals',
    'bigquery-studio',
    'bigquery-translate',
    'body-ids',
    'broken-lines',
    'cache-endpoints',
    'cache-key',
    'cache-memory',
    'cache-warming',
    'catalog',
    'checked-sql-memo',
    'cli-errors',
    'clickhouse-sql',
    'clock-reads',
    'compile-query',
    'dashboard-page',
    'drains-http',
    'drains-log',
    'drains-store',
    'duckdb-engine-start',
    'definitions-types',
    'functions-invocation-stats',
    'head-tables',
    'http-api-keys',
    'http-endpoint-lookup',
    'http-formats',
    'ingest-fast-paths',
    'integration-support',
    'json-flat-paths',
    'logflare-wire',
    'logs-all',
    'memory-budget',
    'memory-relief',
    'memory-watch',
    'merge-policy',
    'options',
    'prepared-statements',
    'otlp-logs',
    'query-gate',
    're2-pattern',
    'required-literal',
    'rollup-variants',
    'sandbox-sizes',
    'sandbox-validate',
    'serial-runs',
    'sources',
    'studio',
    'test-tiers',
    'time',
    'usage-api-counts',
    'wal-rooms',
    'copy-byte-range',
  ],
  /**
   * In process too, but longer: managed storage and compaction on disk (the write-ahead log,
   * ingest, the compactor's runs), DuckDB over generated data or data at volume (the differential
   * test, rollups, the time limit), the TypeScript compiler over the docs.
   */
  heavy: [
    'compact',
    'compaction-memory',
    'definitions',
    'differential',
    'discovered-paths',
    'engine-limits',
    'generate-logs',
    'ingest',
    'ingest-bodies',
    'ingest-readable',
    'ingest-retries',
    'logs-all-newest-first',
    'logs-all-pages',
    'managed-compactor',
    'memory-tables',
    'readme',
    'rollup-quantiles',
    'source-sets',
    'stale-snapshot',
    'studio-reference',
    'usage-api-counts-rollups',
    'wal',
  ],
  /** A child process (the CLI through tsx, node, a system command) or a server on a socket. */
  process: [
    'cli-config',
    'cli-query',
    'cli-serve',
    'clickhouse-shipper',
    'dashboard-serving',
    'drains-forwarding',
    'drains-kept-segments',
    'data-dir-errors',
    'explorer-corpus',
    'data-dir-lock',
    'files-change',
    'http-api',
    'http-frameworks',
    'http-fuzz',
    'http-load',
    'http-microcache',
    'ingest-big-integers',
    'ingest-cli',
    'ingest-clients',
    'ingest-http',
    'ingest-parse-memory',
    'ingest-stall',
    'memory-bounds',
    'otlp-ingest',
    'package',
    'sandbox-bombs',
    'sandbox-escapes',
    'sandbox-queries',
    'stored-rollups',
    'studio-replay',
    'studio-serve',
    'supabase-preset',
    'typed-columns',
  ],
  /** Processes killed (failpoints, kill -9) and files damaged on disk, then what recovery and check make of it. */
  crash: [
    'check-data-dir',
    'commit-log',
    'compact-crash',
    'crash',
    'crash-failpoints-function',
    'crash-failpoints-gateway',
    'crash-retries',
    'damaged-dataset',
    'drains-at-least-once',
    'drains-crash',
    'managed-quarantine',
    'managed-storage',
    'restart-backlog',
    'same-size-damage',
    'wal-damage',
  ],
};

/** `npm test`: everything that needs nothing but Node and npm. */
export default defineConfig({
  test: {
    // Tests that need a server we do not ship run in `npm run test:integration`.
    projects: Object.entries(TIERS).map(([name, files]) => ({ extends: true, test: { name, include: files.map((file) => `test/${file}.test.ts`) } })),
    // Hang guards, far above any run time: the suite must pass on a loaded machine (CI runs it
    // beside two CPU burners). Waits inside tests use HANG_MS of test/support/hang-guard.ts, below this.
    testTimeout: 15 * 60_000,
    hookTimeout: 15 * 60_000,
    // Each file opens its own DuckDB; two workers match the two cores of CI.
    pool: 'forks',
    maxWorkers: 2,
  },
});
