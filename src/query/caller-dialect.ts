import { InvalidSqlError } from '../errors';

/**
 * A BigQuery SELECT sent to an endpoint whose tables are its own CTEs: the dialect reads tables
 * whose columns it knows, the sources' (endpoints with source tables, logs.all's).
 */
export function callerDialectRefused(endpoint: string): InvalidSqlError {
  return new InvalidSqlError('construct', `BigQuery SQL reads source tables, and ${endpoint} has tables of its own: send its SQL in DuckDB's dialect.`);
}
