#!/usr/bin/env node
// The `log-endpoints` command (package bin).
import { readFileSync } from 'node:fs';
import { DUCKDB_ALLOCATOR_ENV, duckdbAllocatorConf } from './duckdb/allocator-env';

// DuckDB's allocator reads its options once, as its library loads: they are set before anything
// that loads it is imported (main, below, is imported after; a static import would be evaluated
// first). src/duckdb/allocator-env.ts says what they are and why.
process.env[DUCKDB_ALLOCATOR_ENV] = duckdbAllocatorConf(process.env);

// One level below the package root both as src/cli.ts and as dist/cli.js.
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function nextShutdownSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

void import('./cli/main')
  .then(({ main }) => main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, shutdownSignal: nextShutdownSignal }, packageVersion()))
  .then((code) => {
    process.exitCode = code;
  });
