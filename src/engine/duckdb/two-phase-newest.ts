import type { EngineValue } from '../engine';
import { formatIsoMicros } from '../../time/iso';

type Rows = Record<string, EngineValue>[];

/**
 * A newest-first statement (logs.all: `ORDER BY timestamp DESC, ... LIMIT n`) over Parquet in two
 * steps: first the oldest timestamp among its rows, from the statement wrapped so that only its
 * filter and sort columns are read (DuckDB drops the unused wide columns, `metadata` above all);
 * then the statement itself over the relation cut to rows at or after that timestamp, a constant,
 * so row-group statistics skip everything older and only the row groups that hold the answer have
 * their wide columns decoded. The cut keeps every row of the answer (all are at or after their
 * oldest), and the statement orders and limits as before: the answer is the one-step answer.
 *
 * Measured on one day of the bench's gateway log (1.4 M rows, 100k-row groups), a page one day
 * back for the busiest project: 269 ms of CPU in one statement, 12 + 81 ms in two.
 *
 * `sqlFor(where)` is the statement's full SQL with the relation cut by `where` (null: not cut);
 * `run` runs one SQL text with the request's parameters.
 *
 * @example
 * const rows = await newestInTwoPhases((where) => fullQuerySql(sql, { edgeLogs: { ...files, where } }), (text) => run(text));
 */
export async function newestInTwoPhases(sqlFor: (where: string | null) => string, run: (sql: string) => Promise<Rows>): Promise<Rows> {
  // A line comment at the statement's end cannot swallow the closing parenthesis.
  const [bound] = await run(`SELECT min(timestamp) AS le_bound, count(*) AS le_rows FROM (\n${sqlFor(null)}\n)`);
  if (!bound || Number(bound.le_rows) === 0 || bound.le_bound === null) return [];
  // The engine's own value (a TIMESTAMP DuckDB returned), written as a literal: a constant lets
  // DuckDB skip row groups by their statistics, which a parameter does not as well.
  const at = formatIsoMicros(BigInt(bound.le_bound as bigint)).replace('T', ' ').replace('Z', '');
  return run(sqlFor(`timestamp >= TIMESTAMP '${at}'`));
}
