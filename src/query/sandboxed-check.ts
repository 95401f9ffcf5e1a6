import { translateBigQuery, type BigQueryTarget } from '../bigquery/translate-bigquery';
import type { OutputColumn } from '../bigquery/ir';
import type { ClickHouseTables } from '../bigquery/print-clickhouse';
import type { BigQuerySchema } from '../bigquery/schema';
import { judgeCallerSql, sandboxTexts, type CheckedSql, type ParserOutput, type SandboxRules } from '../sandbox/validate-caller-sql';
import type { SqlParser } from './sql-parser';
import { mergeTableReads, type TableReads } from '../sandbox/table-reads';
import { firstRowsOf, newestRowsOf } from './first-rows';

/**
 * A caller's SQL in DuckDB's dialect checked by the sandbox (docs/sandboxing.md): the sandbox
 * says which texts to parse (`sandboxTexts`), the parser parses them here, and the sandbox judges
 * the trees (`judgeCallerSql`). Every call goes down: the sandbox is handed parse trees, never a
 * parser to call back.
 *
 * @example
 * const { sql, key } = await checkDuckDbText('select count(*) from edge_logs', { tables: ['edge_logs'], maxRows: 1000 }, neutralSqlParser);
 */
export async function checkDuckDbText(text: string, rules: SandboxRules, parser: Pick<SqlParser, 'serialize'>): Promise<CheckedSql> {
  const texts = sandboxTexts(text, rules.maxRows);
  // One after the other, as the verdict reads them (the text as sent first).
  const alone = await parse(parser, texts.sql);
  const wrapped = await parse(parser, texts.wrapped);
  const checked = judgeCallerSql(texts, { alone, wrapped }, rules);
  const firstRows = firstRowsOf(alone);
  const newestRows = newestRowsOf(alone);
  return { ...checked, ...(firstRows === null ? {} : { firstRows }), ...(newestRows === null ? {} : { newestRows }) };
}

/**
 * A caller's BigQuery SQL translated (src/bigquery) and its DuckDB text checked as DuckDB SQL is
 * (`checkDuckDbText`), whatever the target: the sandbox's guarantee never rests on the translator.
 * Returns what the target runs, the cache key of the checked tree, and the result's columns; for
 * DuckDB, the text without the arrays half of its ranges too (`arraysFree`, when the translation
 * has one), checked the same way: an engine may run either, never a text the sandbox did not see.
 *
 * @example
 * const checked = await checkBigQueryText(sql, schema, 'duckdb', { tables: ['edge_logs'], maxRows: 1000 }, neutralSqlParser);
 */
export async function checkBigQueryText(
  text: string,
  schema: BigQuerySchema,
  target: BigQueryTarget,
  rules: SandboxRules,
  parser: Pick<SqlParser, 'serialize'>,
  tables?: ClickHouseTables,
): Promise<{ sql: string; key: string; columns: OutputColumn[]; firstRows?: number; newestRows?: number; arraysFree?: string; hourCounts?: CheckedSql['hourCounts']; reads?: TableReads }> {
  const translated = await translateBigQuery(text, schema, target, tables);
  const { key, firstRows, newestRows, reads } = await checkDuckDbText(translated.checked, rules, parser);
  // The answers are the same either way: the cache keys on the full text's tree.
  const free = translated.arraysFree === undefined ? undefined : await checkDuckDbText(translated.arraysFree, rules, parser);
  const arraysFree = free?.sql;
  // Its text reading the hour counts, checked with their relation among the tables it may read.
  const hourly = translated.hourCounts;
  const withHourly = hourly === undefined ? null : { ...rules, tables: [...rules.tables, hourly.hourly] };
  const hourCounts =
    hourly === undefined
      ? undefined
      : { ...hourly, sql: (await checkDuckDbText(hourly.sql, withHourly!, parser)).sql, arraysFree: (await checkDuckDbText(hourly.arraysFree, withHourly!, parser)).sql };
  // The rows it asks for are read from the DuckDB text: only DuckDB runs that text.
  return {
    sql: translated.sql,
    key,
    columns: translated.columns,
    ...(firstRows !== undefined && target === 'duckdb' ? { firstRows } : {}),
    ...(newestRows !== undefined && target === 'duckdb' ? { newestRows } : {}),
    ...(arraysFree === undefined ? {} : { arraysFree }),
    ...(hourCounts !== undefined && target === 'duckdb' ? { hourCounts } : {}),
    // What either text reads: the engine runs one or the other over the same tables.
    ...(reads === undefined ? {} : { reads: mergeTableReads([reads, ...(free?.reads === undefined ? [] : [free.reads])]) }),
  };
}

/** The parser's output for a text, its failure included: the sandbox says what a failure means. */
async function parse(parser: Pick<SqlParser, 'serialize'>, sql: string): Promise<ParserOutput> {
  try {
    return { json: await parser.serialize(sql) };
  } catch (failed) {
    return { failed };
  }
}
