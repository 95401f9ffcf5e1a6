import { defineConfig } from 'tsup';
import { dashboardPage } from './tsup.dashboard.config';

export default defineConfig([
  {
    // cli.ts starts with a `#!/usr/bin/env node` line, which esbuild keeps at the top of dist/cli.js (the bin).
    // ingest-parser: the thread that parses large ingest bodies (src/ingest/parse-worker.ts starts it).
    entry: {
      index: 'src/index.ts',
      redis: 'src/redis.ts',
      http: 'src/http.ts',
      node: 'src/node.ts',
      clickhouse: 'src/clickhouse.ts',
      cli: 'src/cli.ts',
      'ingest-parser': 'src/ingest/parse-worker.ts',
    },
    format: ['esm', 'cjs'],
    // Shared chunks in the CJS build too: without them each entry (index, http, node, redis) carries
    // its own copy of the core, and `instanceof LogEndpointsError` across entries fails (every
    // library error became a 500 through log-endpoints/http under require).
    splitting: true,
    // Types for the importable entries; the CLI is a program, not an API.
    dts: { entry: { index: 'src/index.ts', redis: 'src/redis.ts', http: 'src/http.ts', node: 'src/node.ts', clickhouse: 'src/clickhouse.ts' } },
    sourcemap: true,
    // dist/dashboard is the page's (built beside this one, and by itself by `npm run build:dashboard`).
    clean: ['!dashboard/**'],
    target: 'node20',
    // import.meta.url locates queries/ at run time; the shim makes it work in the CJS build too.
    shims: true,
    external: ['@duckdb/node-api', 'apache-arrow', 'redis', 'ioredis', '@clickhouse/client'],
  },
  dashboardPage,
]);
