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
 * A source's `typedPairs` (two of its typed fields each) add rows per (project, hour, pair, the
 * pair's values): what a count grouped by those two fields reads for whole hours (the Explorer's
 * Top Paths and Error Count by User; src/bigquery/counts-per-group.ts). Only the pairs a source
 * declares: one pair of fields of many values each is as many rows as its events.
 *
 * Columns: the project column (named as the source names it, so a source-table template reads it),
 * `timestamp` (the hour's first instant), `field` (the typed field's dotted path; a pair's two
 * joined by `typedPairName`), `text` and `json` (what its two typed columns hold; a pair's first
 * field's), with pairs declared `text2` and `json2` (a pair's second field's; NULL on one field's
 * rows), `n` (the rows). Rows whose timestamp is NULL or infinite are left out: they belong to no
 * hour, and a reader counts them from the rows.
 *
 * @example
 * typedHourlyName('edge_logs'); // 'edge_logs_typed_hourly'
 */
export function typedHourlyName(relation: string): string {
  return `${relation}_typed_hourly`;
}

/**
 * The `field` of a declared pair's rows in the hour counts: its two dotted paths joined by `+`
 * (which no dotted path holds).
 *
 * @example
 * typedPairName(['request.path', 'request.search']); // 'request.path+request.search'
 */
export function typedPairName(pair: readonly [string, string]): string {
  return pair.join('+');
}

/**
 * The rollup's SQL over the source's relation: one scan grouped by GROUPING SETS, one set per
 * declared typed field (project, hour and the field's two columns) and one per declared pair (the
 * two fields' columns), each row then named by the set that grouped it. On a day of the Studio
 * bench's gateway (571,429 events, five fields), 0.1 - 0.14 s of CPU against 0.63 - 0.77 for a
 * UNION ALL of one GROUP BY per field (which read the file once per field); the same 1,296 rows
 * (docs/performance.md, "Studio's chart from the hour counts"). Without pairs, the text it always
 * was (a file's rollup keeps its definition).
 *
 * @example
 * typedHourlySql('postgres_logs', 'project', ['parsed.error_severity']);
 * // "SELECT project, timestamp, CASE WHEN g = ... THEN 'parsed.error_severity' END AS field, ... GROUP BY GROUPING SETS (...))"
 */
export function typedHourlySql(relation: string, projectColumn: string, typedFields: readonly string[], typedPairs: ReadonlyArray<readonly [string, string]> = []): string {
  const fields = typedFields.map((path, i) => {
    const { text, json } = typedColumnNames(path);
    return { path, text: columnName(text), json: columnName(json), grouped: `g${i + 1}` };
  });
  const hour = "date_trunc('hour', timestamp)";
  if (!typedPairs.length) {
    // GROUPING(column) is 0 in the rows of the sets that group by it: one field's per row.
    const pick = (value: (f: (typeof fields)[number]) => string) => `CASE ${fields.map((f) => `WHEN ${f.grouped} = 0 THEN ${value(f)}`).join(' ')} END`;
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
  // With pairs a field's column is grouped by more than one set: each set is told by the bits of
  // GROUPING over every field's text column (a bit 0 where the set groups by that field).
  const of = (path: string) => fields.find((f) => f.path === path)!;
  const all = (1 << fields.length) - 1;
  const bits = (grouped: ReadonlyArray<(typeof fields)[number]>) => grouped.reduce((mask, f) => mask & ~(1 << (fields.length - 1 - fields.indexOf(f))), all);
  const sets = [
    ...fields.map((f) => ({ name: f.path, first: f, second: null as (typeof fields)[number] | null })),
    ...typedPairs.map((p) => ({ name: typedPairName(p), first: of(p[0]), second: of(p[1]) })),
  ];
  const pick = (value: (s: (typeof sets)[number]) => string) => `CASE ${sets.map((s) => `WHEN g = ${bits(s.second ? [s.first, s.second] : [s.first])} THEN ${value(s)}`).join(' ')} END`;
  const grouping = sets.map((s) => `(${[projectColumn, hour, s.first.text, s.first.json, ...(s.second ? [s.second.text, s.second.json] : [])].join(', ')})`).join(', ');
  const inner = `SELECT ${projectColumn}, ${hour} AS timestamp, ${fields.map((f) => `${f.text}, ${f.json}`).join(', ')}, GROUPING(${fields.map((f) => f.text).join(', ')}) AS g, count(*) AS n
FROM ${relation}
WHERE isfinite(timestamp)
GROUP BY GROUPING SETS (${grouping})`;
  return `SELECT ${projectColumn}, timestamp, ${pick((s) => `'${s.name}'`)} AS field, ${pick((s) => s.first.text)} AS text, ${pick((s) => s.first.json)} AS json, ${pick((s) => (s.second ? s.second.text : 'NULL'))} AS text2, ${pick((s) => (s.second ? s.second.json : 'NULL'))} AS json2, n
FROM (
${inner}
)
ORDER BY ALL`;
}
