import type { EngineStatement, SqlDialect } from '../engine/engine';
import { EngineError } from '../errors';

/**
 * A statement's SQL in one dialect, or an engine error saying it has none.
 *
 * @example
 * dialectSql(statementOf(logsAll), 'duckdb'); // 'WITH edge_logs AS (...) SELECT ...'
 */
export function dialectSql(statement: Pick<EngineStatement, 'name' | 'sql'>, dialect: SqlDialect): string {
  const sql = statement.sql[dialect];
  if (sql === undefined) throw new EngineError('query_failed', `${statement.name} has no ${dialect === 'duckdb' ? 'DuckDB' : 'ClickHouse'} SQL.`);
  return sql;
}
