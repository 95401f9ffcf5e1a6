import type { OutputColumn } from './ir';
import { parseBigQuery } from './parse-bigquery';
import { printClickHouse, type ClickHouseTables } from './print-clickhouse';
import { printDuckDb } from './print-duckdb';
import { countsPerValue } from './counts-per-value';
import { groupHourCountsOf, hourCountsOf, type HourCounts } from './hour-counts';
import { countsPerGroup } from './counts-per-group';
import { translateQuery } from './query';
import type { BigQuerySchema } from './schema';
import { SourceText } from './string-literal';

/** The engine a translation is printed for. */
export type BigQueryTarget = 'duckdb' | 'clickhouse';

/** A caller's BigQuery SQL, translated. */
export interface TranslatedSql {
  /** The SQL the target engine runs (for DuckDB, the same text as `checked`). */
  sql: string;
  /**
   * The DuckDB text of the same tree: what the sandbox checks (src/query's `checkBigQueryText`) before `sql`
   * runs, whatever the engine, so the sandbox's guarantee never rests on the translator.
   */
  checked: string;
  /**
   * For DuckDB, when the text splits a range by the arrays flag (print-duckdb.ts): the same tree
   * printed without the unnested half of those ranges, what runs when every input the query reads
   * holds no `[`. Checked by the sandbox as `checked` is; absent when the two texts are the same.
   */
  arraysFree?: string;
  /**
   * For DuckDB, when the query is a chart whose first step the hour counts may serve
   * (hour-counts.ts): the same tree printed with that step reading them too (`sql`, and `arraysFree`
   * as above), and the shape an engine needs to give them only whole hours of the window.
   */
  hourCounts?: HourCounts & { sql: string; arraysFree: string };
  /** The result's columns: names and kinds (timestamp, json, integer, float, text, boolean). */
  columns: OutputColumn[];
}

/**
 * Translates a caller's BigQuery SQL (what Supabase Studio writes over Logflare's schema) into a
 * SELECT over the schema's table names, for DuckDB and, printed from the same tree, for
 * ClickHouse. A construct outside the supported set is an `InvalidSqlError` naming it
 * (docs/sandboxing.md, "BigQuery dialect"). The result must still pass the sandbox before `sql`
 * runs: src/query's `checkBigQueryText` checks `checked`.
 *
 * @example
 * const { sql, columns } = await translateBigQuery(
 *   'select request.path, count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request group by 1',
 *   schema, 'duckdb');
 */
export async function translateBigQuery(text: string, schema: BigQuerySchema, target: BigQueryTarget, tables?: ClickHouseTables): Promise<TranslatedSql> {
  const parsed = await parseBigQuery(text);
  const query = translateQuery(parsed, null, { src: new SourceText(text), schema, ctes: [] });
  const checked = printDuckDb(query);
  if (target === 'duckdb') {
    const arraysFree = printDuckDb(query, { arraysFree: true });
    const counts = countsPerValue(query);
    const groups = counts === null ? countsPerGroup(query) : null;
    const hourly = counts !== null ? hourCountsOf(query, counts) : groups !== null ? groupHourCountsOf(groups) : null;
    // Printed only where the two-step text is (a count whose printed form reads another column is not).
    const hourCounts = hourly === null ? null : { ...hourly, sql: printDuckDb(query, { hourCounts: hourly }), arraysFree: printDuckDb(query, { arraysFree: true, hourCounts: hourly }) };
    return {
      sql: checked,
      checked,
      columns: query.columns,
      ...(arraysFree === checked ? {} : { arraysFree }),
      ...(hourCounts === null || hourCounts.sql === checked ? {} : { hourCounts }),
    };
  }
  return { sql: printClickHouse(query, tables ?? defaultTables(schema)), checked, columns: query.columns };
}

/** Table name -> the FROM item ClickHouse reads it by (by default, the bare name). */
function defaultTables(schema: BigQuerySchema): ClickHouseTables {
  return Object.fromEntries(Object.keys(schema.tables).map((name) => [name, `\`${name}\``]));
}
