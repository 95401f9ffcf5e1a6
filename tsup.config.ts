import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  // import.meta.url locates queries/ at run time; the shim makes it work in the CJS build too.
  shims: true,
  external: ['@duckdb/node-api', 'apache-arrow', 'redis', 'ioredis'],
});
