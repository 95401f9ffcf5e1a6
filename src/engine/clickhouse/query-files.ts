import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { QueryName, SourceName } from '../engine';
import { RELATION_NAME } from '../duckdb/source-relations';

let folder: string | undefined;

/**
 * queries/clickhouse/ of the package: the nearest such folder above this module, which is one
 * answer for the sources (src/engine/clickhouse), the bundle (dist/) and an installed package.
 */
function queriesFolder(): string {
  if (folder) return folder;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'queries', 'clickhouse');
    if (existsSync(candidate)) return (folder = candidate);
    const parent = dirname(dir);
    if (parent === dir) throw new Error('log-endpoints: cannot find the queries/clickhouse folder of the package');
    dir = parent;
  }
}

const cache = new Map<string, string>();

/** The SQL of a saved query for ClickHouse as written in queries/clickhouse/<name>.sql. */
export function clickhouseQuerySql(name: QueryName): string {
  let sql = cache.get(name);
  if (sql === undefined) {
    sql = readFileSync(join(queriesFolder(), `${name}.sql`), 'utf8');
    cache.set(name, sql);
  }
  return sql;
}

/**
 * The SQL sent for a saved query: comments removed (18.x takes the query in the URL when it
 * comes with external data, so shorter is better) and the relation the file reads (`edge_logs`
 * or `function_edge_logs` after FROM) replaced by the configured table's full name.
 */
export function preparedQuerySql(name: QueryName, source: SourceName, qualifiedTable: string): string {
  const relation = RELATION_NAME[source];
  const from = new RegExp(`\\bFROM\\s+${relation}\\b`, 'g');
  const sql = stripComments(clickhouseQuerySql(name));
  if (!from.test(sql)) throw new Error(`queries/clickhouse/${name}.sql does not read FROM ${relation}.`);
  return sql.replace(from, `FROM ${qualifiedTable}`);
}

/**
 * The SQL of a statement of ours that is not an endpoint (e.g. `wal.shipped-offsets`) as sent:
 * comments removed and its placeholder relation (`FROM <relation>`) replaced by `qualifiedTable`.
 */
export function statementSql(file: string, relation: string, qualifiedTable: string): string {
  let sql = cache.get(file);
  if (sql === undefined) {
    sql = readFileSync(join(queriesFolder(), `${file}.sql`), 'utf8');
    cache.set(file, sql);
  }
  const from = new RegExp(`\\bFROM\\s+${relation}\\b`, 'g');
  const stripped = stripComments(sql);
  if (!from.test(stripped)) throw new Error(`queries/clickhouse/${file}.sql does not read FROM ${relation}.`);
  return stripped.replace(from, `FROM ${qualifiedTable}`);
}

/** Removes `--` comments (outside quoted text) and blank lines. */
export function stripComments(sql: string): string {
  const lines: string[] = [];
  for (const line of sql.split('\n')) {
    let quoted = false;
    let end = line.length;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c === '\\' && quoted) i++;
      else if (c === "'") quoted = !quoted;
      else if (!quoted && c === '-' && line[i + 1] === '-') {
        end = i;
        break;
      }
    }
    const code = line.slice(0, end).trimEnd();
    if (code.trim()) lines.push(code);
  }
  return lines.join('\n');
}
