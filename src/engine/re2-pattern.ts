import { VARCHAR } from '@duckdb/node-api';
import { onNeutralDuckDB } from './neutral-duckdb';

/**
 * The one judge of `regex` parameters, whatever the engine: DuckDB's RE2, in the engines' neutral
 * DuckDB (neutral-duckdb.ts), so the ClickHouse engine needs none of the DuckDB engine's files. Why one judge: ClickHouse's RE2 changes with the server's version
 * (26.x accepts `(?<name>x)`, which 18.16 and DuckDB refuse), and the same request must get the
 * same answer from every engine. An engine may refuse more afterwards (`Engine.checkPattern`).
 */
const verdicts = new Map<string, string | null>();

/**
 * Null when RE2 (as DuckDB's `regexp_matches` compiles it) accepts the pattern, otherwise RE2's
 * reason in a few words.
 *
 * @example
 * await re2PatternProblem('^(abc|def)$'); // null
 * await re2PatternProblem('(?<n>x)');     // 'invalid perl operator: (?<'
 */
export async function re2PatternProblem(pattern: string): Promise<string | null> {
  const known = verdicts.get(pattern);
  if (known !== undefined) return known;
  const verdict = await onNeutralDuckDB(async (connection) => {
    try {
      await connection.run("SELECT regexp_matches('', $pattern)", { pattern }, { pattern: VARCHAR });
      return null;
    } catch (error) {
      return String((error as Error).message).replace(/^[A-Za-z ]*Error: /, '');
    }
  });
  if (verdicts.size >= 1024) verdicts.clear();
  verdicts.set(pattern, verdict);
  return verdict;
}
