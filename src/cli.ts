#!/usr/bin/env node
// The `log-endpoints` command (package bin).
import { readFileSync } from 'node:fs';
import { main } from './cli/main';

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

void main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, shutdownSignal: nextShutdownSignal }, packageVersion()).then((code) => {
  process.exitCode = code;
});
