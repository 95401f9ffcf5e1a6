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
 * The rollup's SQL over the source's relation: one scan grouped by GROUPING SETS, one set per
 * declared typed field (project, hour and the field's two columns), each row then named by the
 * field its set grouped. On a day of the Studio bench's gateway (571,429 events, five fields), 0.1 -
 * 0.14 s of CPU against 0.63 - 0.77 for a UNION ALL of one GROUP BY per field (which read the file
 * once per field); the same 1,296 rows (docs/performance.md, "Studio's chart from the hour counts").
 *
 * @example
 * typedHourlySql('postgres_logs', 'project', ['parsed.error_severity']);
 * // "SELECT project, timestamp, CASE WHEN g1 = 0 THEN 'parsed.error_severity' END AS field, ... GROUP BY GROUPING SETS (...))"
 */
export function typedHourlySql(relation: string, projectColumn: string, typedFields: readonly string[]): string {
  const fields = typedFields.map((path, i) => {
    const { text, json } = typedColumnNames(path);
    return { path, text: columnName(text), json: columnName(json), grouped: `g${i + 1}` };
  });
  // GROUPING(column) is 0 in the rows of the sets that group by it: one field's per row.
  const pick = (value: (f: (typeof fields)[number]) => string) => `CASE ${fields.map((f) => `WHEN ${f.grouped} = 0 THEN ${value(f)}`).join(' ')} END`;
  const hour = "date_trunc('hour', timestamp)";
  const sets = fields.map((f) => `(${projectColumn}, ${hour}, ${f.text}, ${f.json})`).join(', ');
  const inner = `SELECT ${projectColumn}, ${hour} AS timestamp, ${fields.map((f) => `${f.text}, ${f.json}, GROUPING(${f.text}) AS ${f.grouped}`).join(', ')}, count(*) AS n
FROM ${relation}
WHERE isfinite(timestamp)
GROUP BY GROUPING SETS (${sets})`;
  // In one order whatever the grouping's threads did (a file's rollup is the same rows wherever it
  // is computed), the project and the hour first as the other rollups are.
  return `SELECT ${projectColumn}, timestamp, ${pick((f) => `'${f.path}'`)} AS field, ${pick((f) => f.text)} AS text, ${pick((f) => f.json)} AS json, n
FROM (
${inner}
)
ORDER BY ALL`;
}
