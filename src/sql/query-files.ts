import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlDialect } from './sql-scan';
import { EngineError } from '../errors';

let root: string | undefined;

/**
 * The package root: the nearest folder above this module holding `queries/`. Walking up keeps
 * one answer for the sources (src/engine), the bundle (dist/) and an installed package.
 */
function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'queries', 'duckdb'))) return (root = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new EngineError('query_failed', 'log-endpoints: cannot find the queries/ folder of the package');
    dir = parent;
  }
}

const cache = new Map<string, string>();

/**
 * The SQL text of a saved query (or another statement of the engine's), read once from
 * `queries/<dialect>/<name>.sql`.
 *
 * @example
 * querySql('duckdb', 'logs.all'); // 'SELECT id, timestamp, event_message, metadata FROM edge_logs ...'
 */
export function querySql(dialect: SqlDialect, name: string): string {
  const key = `${dialect}/${name}`;
  let sql = cache.get(key);
  if (sql === undefined) {
    sql = readFileSync(join(packageRoot(), 'queries', dialect, `${name}.sql`), 'utf8');
    cache.set(key, sql);
  }
  return sql;
}
