import { createHash } from 'node:crypto';
import { InvalidSqlError } from '../errors';
import { checkParseTree } from './check-parse-tree';
import { checkSizes } from './check-sizes';
import { sandboxedSelect } from './compose-sandboxed-sql';
import { withoutPaths } from './without-paths';
import { tableReads, type TableReads } from './table-reads';
import type { ColumnType } from '../sql/column-types';

/**
 * Longest SQL text a caller may send, in characters (docs/sandboxing.md, "Limits"): what fits a
 * URL of the handler's default limit, since Supabase Studio sends its SQL in the query string.
 */
export const MAX_CALLER_SQL_LENGTH = 65_536;

/**
 * What DuckDB's parser made of a text, as the sandbox judges it: the result of
 * `SELECT json_serialize_sql($sql)` (`json`), or the parser's own failure (`failed`). The sandbox
 * never parses: the compiler of a query (src/query) runs the parser and hands this down.
 */
export type ParserOutput = { json: string } | { failed: unknown };

/** The two texts the parser reads for a caller's SQL: as sent (`sql`) and as it runs, inside the wrapper that caps its rows (`wrapped`). */
export interface SandboxTexts {
  /** The text to run (as sent, trailing semicolons and spaces cut). */
  sql: string;
  wrapped: string;
}

/** What a sandboxed query runs with. */
export interface SandboxRules {
  /** The endpoint's CTEs the caller may select from. */
  tables: readonly string[];
  /** The endpoint's max rows: the wrapper's LIMIT. */
  maxRows: number;
}

/** A caller's SQL that passed every rule. */
export interface CheckedSql {
  /** The text to run (as sent, trailing semicolons and spaces cut). */
  sql: string;
  /**
   * A digest of the parse tree without positions: the same for texts that differ only in
   * spaces, comments or keyword case, so the cache keys on it.
   */
  key: string;
  /**
   * The answer's columns and kinds, where the check knows them (a translated BigQuery SELECT):
   * engines whose results do not carry SQL types (ClickHouse's timestamps are integers) shape by them.
   */
  columns?: ReadonlyArray<{ name: string; kind: ColumnType }>;
  /**
   * Over source tables: the sources whose tables it names (by name), found once when it is checked:
   * a query reads those, no others.
   */
  sources?: readonly string[];
  /**
   * A translated BigQuery SELECT: it reads the sources' typed columns (src/sources/typed-fields.ts)
   * where it reads their fields, so its source tables show them (a caller's own SQL never sees them).
   */
  typedColumns?: boolean;
  /**
   * A translated BigQuery SELECT whose ranges split by the arrays flag (src/bigquery/print-duckdb.ts):
   * the same SELECT without their unnested half, checked as `sql` was. It gives the same answer
   * where every input the query reads holds no `[`, and an engine that knows so runs it instead.
   */
  arraysFree?: string;
  /**
   * The rows it asks for when any rows that pass its filter are its answer (`SELECT <columns> FROM
   * <table> WHERE ... LIMIT n`, src/query/first-rows.ts): an engine may stop reading once it has them.
   */
  firstRows?: number;
  /**
   * How many of each table's newest rows it reads when they are all it reads (`... ORDER BY
   * timestamp DESC NULLS LAST LIMIT n` over each table, src/query/first-rows.ts): an engine may
   * read each file's newest rows (its head) instead of the file.
   */
  newestRows?: number;
  /**
   * A translated chart whose first step the source's hour counts may serve (src/bigquery/hour-counts.ts):
   * its text reading them too (`sql`, and without the arrays half `arraysFree`), checked as `sql`
   * was with the hour counts' relation (`hourly`) among its tables, the field they are read for
   * and the first and last instants its own WHERE keeps (microseconds, null for none).
   */
  hourCounts?: { sql: string; arraysFree: string; hourly: string; field: string; from: bigint | null; until: bigint | null };
  /**
   * What it reads of the tables it may read, from the tree the sandbox checked (table-reads.ts):
   * the names it gives, and the tables it reads whole or by `*`. Of a translated SELECT, its form
   * without the arrays half's too. An engine gives a table only the columns named here.
   */
  reads?: TableReads;
}

/** The dialect of a caller's SQL: DuckDB's own, or BigQuery's (what Supabase Studio writes: docs/sandboxing.md, "BigQuery dialect"). */
export type CallerDialect = 'duckdb' | 'bigquery';

/**
 * The first half of the sandbox's check of a caller's SQL, before any parse: not empty, within the
 * length limit; returns the texts the parser reads (as sent, and as it runs). Text in, texts out.
 *
 * @example
 * sandboxTexts('select 1;', 1000); // { sql: 'select 1', wrapped: 'SELECT * FROM (\nselect 1\n) AS sandboxed LIMIT 1000' }
 */
export function sandboxTexts(text: string, maxRows: number): SandboxTexts {
  if (typeof text !== 'string' || text.trim() === '') throw new InvalidSqlError('syntax', 'The SQL is empty: send one SELECT statement.');
  if (text.length > MAX_CALLER_SQL_LENGTH) {
    throw new InvalidSqlError('too_long', `The SQL is longer than ${MAX_CALLER_SQL_LENGTH} characters.`);
  }
  // A trailing `;` is harmless alone but would break the wrapper.
  const sql = text.replace(/[\s;]+$/, '');
  return { sql, wrapped: sandboxedSelect(sql, maxRows) };
}

/**
 * The sandbox's verdict on a caller's SQL from what the parser made of its two texts
 * (`sandboxTexts`): one SELECT statement whose parse tree (as it runs, inside the wrapper that
 * caps its rows) passes `checkParseTree` and `checkSizes`. Refusals are `InvalidSqlError`s naming
 * the rule; their messages never echo file contents, settings or paths. Parse trees in, verdict
 * out: nothing is called back.
 *
 * @example
 * const texts = sandboxTexts('select count(*) from edge_logs', 1000);
 * const checked = judgeCallerSql(texts, { alone: { json: await serialize(texts.sql) }, wrapped: { json: await serialize(texts.wrapped) } }, { tables: ['edge_logs'], maxRows: 1000 });
 */
export function judgeCallerSql(texts: SandboxTexts, parsed: { alone: ParserOutput; wrapped: ParserOutput }, rules: SandboxRules): CheckedSql {
  const { sql } = texts;
  // As sent first, for the rule a statement breaks (not a SELECT, several of them) ...
  const alone = statementsOf(parsed.alone);
  if (alone.statements.length !== 1) throw new InvalidSqlError('one_statement', 'Send exactly one SELECT statement.');
  // ... then as it runs: the check is on the very text the engine gets.
  const wrapped = statementsOf(parsed.wrapped);
  if (wrapped.statements.length !== 1) throw new InvalidSqlError('one_statement', 'Send exactly one SELECT statement.');
  const statement = wrapped.statements[0];
  checkParseTree(statement, rules.tables);
  // Only a tree of known parts reaches the size check.
  checkSizes(statement, rules.tables);
  const key = createHash('sha256')
    .update(JSON.stringify(statement, (k, v) => (k === 'query_location' ? undefined : v)))
    .digest('hex');
  return { sql, key, reads: tableReads(statement, rules.tables) };
}

interface Serialized {
  statements: unknown[];
}

function statementsOf(output: ParserOutput): Serialized {
  let out: { error?: boolean; error_message?: unknown; statements?: unknown };
  try {
    if ('failed' in output) throw output.failed;
    out = JSON.parse(output.json);
  } catch (error) {
    throw new InvalidSqlError('syntax', 'The SQL could not be parsed.', { cause: error });
  }
  if (out.error) {
    const message = String(out.error_message ?? '');
    if (/only select statements/i.test(message)) {
      throw new InvalidSqlError('select_only', 'Only a SELECT statement may be sent (no SET, PRAGMA, ATTACH, COPY, INSTALL, LOAD, CALL, EXPORT, PREPARE, EXECUTE, ...).');
    }
    throw new InvalidSqlError('syntax', `The SQL does not parse: ${parserMessage(message)}`);
  }
  if (!Array.isArray(out.statements)) throw new InvalidSqlError('syntax', 'The SQL could not be parsed.');
  return { statements: out.statements };
}

/** DuckDB's parser message, one line, without its hints about settings. */
function parserMessage(message: string): string {
  if (/expression depth|memory exhausted/i.test(message)) return 'it is nested too deeply.';
  const line = withoutPaths(message.split('\n')[0]!.trim());
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
