import { columnName } from '../sql/column-name';
import { typedColumnNames } from './typed-column-names';

/**
 * The stored rollup every source with declared typed fields gets (docs/definitions.md, "Typed
 * fields"): its rows per (project, hour, declared typed field, value of that field), each with its
 * count. It is what a chart counted per value (src/bigquery/counts-per-value.ts) groups its rows by
 * first, kept per compacted file: Studio's 7-day gateway chart then reads a few thousand of these
 * rows instead of scanning 4 M events for their timestamp and status (docs/performance.md, "Studio's
 * chart from the hour counts"). Derived from `typedFields`, never declared again: one field's
 * values per row, not their cross product (the gateway's five fields together would be as many
 * rows as its events: the path, the query string and the origin time vary per request).
 *
 * Columns: the project column (named as the source names it, so a source-table template reads it),
 * `timestamp` (the hour's first instant), `field` (the typed field's dotted path), `text` and
 * `json` (what its two typed columns hold), `n` (the rows). Rows whose timestamp is NULL or
 * infinite are left out: they belong to no hour, and a reader counts them from the rows.
 *
 * @example
 * typedHourlyName('edge_logs'); // 'edge_logs_typed_hourly'
 */
export function typedHourlyName(relation: string): string {
  return `${relation}_typed_hourly`;
}

/**
 * The rollup's SQL over the source's relation (one SELECT per declared typed field, grouped by
 * project, hour and the field's two columns).
 *
 * @example
 * typedHourlySql('postgres_logs', 'project', ['parsed.error_severity']);
 * // "SELECT project, date_trunc('hour', timestamp) AS timestamp, 'parsed.error_severity' AS field, ... GROUP BY ALL"
 */
export function typedHourlySql(relation: string, projectColumn: string, typedFields: readonly string[]): string {
  return typedFields
    .map((path) => {
      const { text, json } = typedColumnNames(path);
      return `SELECT ${projectColumn}, date_trunc('hour', timestamp) AS timestamp, '${path}' AS field, ${columnName(text)} AS text, ${columnName(json)} AS json, count(*) AS n\nFROM ${relation}\nWHERE isfinite(timestamp)\nGROUP BY ALL`;
    })
    .join('\nUNION ALL\n');
}
