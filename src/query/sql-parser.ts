import { VARCHAR } from '@duckdb/node-api';
import { onNeutralDuckDB } from '../engine/neutral-duckdb';

/**
 * DuckDB's parser as queries are compiled with it: a caller's SQL is checked on its parse tree, a
 * definition's SQL prepared once at start. An object passed to the compiler, never a callback into
 * the engine that runs the query: the verdict is the same whatever engine runs it.
 */
export interface SqlParser {
  /** The result of `SELECT json_serialize_sql($sql)` for a text (what the sandbox reads). */
  serialize(sql: string): Promise<string>;
  /** Null when the text prepares (its names and types bind), else DuckDB's reason, one line. */
  prepare(sql: string): Promise<string | null>;
}

/**
 * The parser of the engines' neutral DuckDB (one thread, no extensions, nothing read): the one
 * every instance uses.
 *
 * @example
 * JSON.parse(await neutralSqlParser.serialize('select 1')).statements.length; // 1
 * await neutralSqlParser.prepare('SELECT nope'); // 'Referenced column "nope" not found in FROM clause! ...'
 */
export const neutralSqlParser: SqlParser = {
  serialize: (sql) => onNeutralDuckDB(async (c) => String((await c.runAndReadAll('SELECT json_serialize_sql($sql::VARCHAR)', { sql }, { sql: VARCHAR })).getRows()[0]![0])),
  prepare: (sql) =>
    onNeutralDuckDB(async (c) => {
      try {
        (await c.prepare(sql)).destroySync();
        return null;
      } catch (error) {
        return String((error as Error).message)
          .split('\n')[0]!
          .replace(/^[A-Za-z ]*Error: /, '');
      }
    }),
};
