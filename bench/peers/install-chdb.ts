import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/** The version measured; ClickHouse 26.7 in process. */
const CHDB_VERSION = '3.4.0';

/** Where peers are installed on demand: never a dependency of the package, nor of `npm ci`. */
const PEERS_DIR = resolve('.bench-data', 'peers');

/** The subset of npm `chdb` the bench uses. */
export interface ChdbSession {
  query(sql: string, format?: string): string;
  queryBindAsync(sql: string, params: object, opts?: { format?: string }): Promise<{ text(): string }>;
  close(): void;
}
export interface Chdb {
  Session: new (path: string) => ChdbSession;
}

/**
 * npm `chdb`, installed into `.bench-data/peers` with `npm install --prefix` the first time it is
 * asked for (its native library comes in the registry package `@chdb/lib-linux-x64-gnu`).
 */
export async function loadChdb(log: (line: string) => void): Promise<Chdb> {
  const entry = join(PEERS_DIR, 'node_modules', 'chdb', 'package.json');
  if (!existsSync(entry)) {
    log(`peers: installing chdb@${CHDB_VERSION} into ${PEERS_DIR} (once)`);
    await mkdir(PEERS_DIR, { recursive: true });
    if (!existsSync(join(PEERS_DIR, 'package.json'))) await writeFile(join(PEERS_DIR, 'package.json'), '{"private":true}\n');
    const npm = spawnSync('npm', ['install', '--prefix', PEERS_DIR, '--no-save', '--no-audit', '--no-fund', `chdb@${CHDB_VERSION}`], { stdio: 'inherit' });
    if (npm.status !== 0) throw new Error(`npm install chdb@${CHDB_VERSION} failed (exit ${npm.status}); the chdb peer needs it`);
  }
  return createRequire(entry)('chdb') as Chdb;
}

/**
 * Why chdb cannot be had on this machine (its install failed: no network, no registry), or null
 * when it loads: a phase that times it as a peer leaves it out with that one line instead of failing the run.
 */
export async function missingChdb(log: (line: string) => void): Promise<string | null> {
  try {
    await loadChdb(log);
    return null;
  } catch (error) {
    return `${(error as Error).message.split('\n')[0]} (the bench installs it into .bench-data/peers once the npm registry can be reached)`;
  }
}
