import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { QueryName } from '../engine';

let root: string | undefined;

/**
 * The package root: the nearest folder above this module holding `queries/`. Walking up keeps
 * one answer for the sources (src/engine/duckdb), the bundle (dist/) and an installed package.
 */
function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'queries', 'duckdb'))) return (root = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('log-endpoints: cannot find the queries/ folder of the package');
    dir = parent;
  }
}

const cache = new Map<QueryName, string>();

/** The SQL text of a saved query for DuckDB, read once from queries/duckdb/<name>.sql. */
export function querySql(name: QueryName): string {
  let sql = cache.get(name);
  if (sql === undefined) {
    sql = readFileSync(join(packageRoot(), 'queries', 'duckdb', `${name}.sql`), 'utf8');
    cache.set(name, sql);
  }
  return sql;
}
