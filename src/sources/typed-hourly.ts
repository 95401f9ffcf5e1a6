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

/**
 * The stored rollup a source with declared `typedPairs` gets beside its hour counts: its rows per
 * (project, hour, declared pair, values of the pair's two fields), each with its count. What a
 * count grouped by such a pair reads for a window's whole hours (the Explorer's Top Paths and
 * Error Count by User; src/bigquery/counts-per-group.ts) instead of the rows of a week.
 *
 * A pair of fields that vary per event (a path and a query string in real traffic) would make a
 * rollup as large as the file, and its grouping more memory than compaction has. So a file's rows
 * are kept only when every pair's groups, counted first (approximately, in a fixed few KB), number
 * at most `TYPED_PAIRS_LIMIT` (its grouping's memory) and at most half the file's events (read
 * instead of the rows, it reads at most half as many); otherwise the rollup holds no rows, and a
 * reader reads the file's rows (a rollup with rows is complete for every pair).
 *
 * Columns: the project column, `timestamp` (the hour's first instant), `field` (`typedPairName`),
 * `text` and `json` (the first field's typed columns), `text2` and `json2` (the second's), `n`.
 * Rows whose timestamp is NULL or infinite are left out, as in the hour counts.
 *
 * @example
 * typedPairsName('edge_logs'); // 'edge_logs_typed_pairs'
 */
export function typedPairsName(relation: string): string {
  return `${relation}_typed_pairs`;
}

/** The most rows a file's pairs rollup keeps (above it, none: the file is read as rows). */
export const TYPED_PAIRS_LIMIT = 65_536;

/**
 * The `field` of a declared pair's rows: its two dotted paths joined by `+` (which no dotted path holds).
 *
 * @example
 * typedPairName(['request.path', 'request.search']); // 'request.path+request.search'
 */
export function typedPairName(pair: readonly [string, string]): string {
  return pair.join('+');
}

/**
 * The pairs rollup's SQL over the source's relation (`typedPairsName`): the groups counted first
 * (`approx_count_distinct`, bounded memory), then one GROUP BY per pair, kept only when every
 * pair is within the bounds. On a day of the Studio bench's gateway (571,429 events, one pair):
 * see docs/performance.md, "The Explorer's 7-day templates from the hour counts".
 *
 * @example
 * typedPairsSql('postgres_logs', 'project', [['parsed.user_name', 'parsed.error_severity']]);
 * // "SELECT project, timestamp, field, text, json, text2, json2, n FROM (SELECT ... WHERE isfinite(timestamp) AND (SELECT g1 <= 65536 ...) GROUP BY ALL) ORDER BY ALL"
 */
export function typedPairsSql(relation: string, projectColumn: string, typedPairs: ReadonlyArray<readonly [string, string]>): string {
  const hour = "date_trunc('hour', timestamp)";
  const pairs = typedPairs.map(([a, b]) => {
    const [x, y] = [typedColumnNames(a), typedColumnNames(b)];
    return { name: typedPairName([a, b]), columns: [x.text, x.json, y.text, y.json].map(columnName) };
  });
  const counted = pairs.map((p, i) => `approx_count_distinct(hash(${projectColumn}, ${hour}, ${p.columns.join(', ')})) AS g${i + 1}`);
  const within = pairs.map((_, i) => `g${i + 1} <= ${TYPED_PAIRS_LIMIT} AND g${i + 1} * 2 <= events`).join(' AND ');
  // A scalar subquery (run once): a rollup's SQL follows the WITH that names the file as its relation.
  const kept = `(SELECT ${within} FROM (SELECT ${counted.join(', ')}, count(*) AS events FROM ${relation} WHERE isfinite(timestamp)))`;
  const groups = pairs.map(
    (p) => `SELECT ${projectColumn}, ${hour} AS timestamp, '${p.name}' AS field, ${p.columns[0]} AS text, ${p.columns[1]} AS json, ${p.columns[2]} AS text2, ${p.columns[3]} AS json2, count(*) AS n
FROM ${relation}
WHERE isfinite(timestamp) AND ${kept}
GROUP BY ALL`,
  );
  // In one order whatever the grouping's threads did, the project and the hour first.
  return `SELECT ${projectColumn}, timestamp, field, text, json, text2, json2, n
FROM (
${groups.join('\nUNION ALL\n')}
)
ORDER BY ALL`;
}
