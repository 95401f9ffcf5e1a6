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
 * rows as its events: the path, the query string and the origin time vary per request). A field
 * whose values alone vary that much in a file (a gateway's query string, one per request) is left
 * out of that file's counts, rows with no hour saying so (`boundedCountsSql`), and a reader reads
 * that file's rows for it; the file's other fields are counted.
 *
 * Columns: the project column (named as the source names it, so a source-table template reads it),
 * `timestamp` (the hour's first instant), `field` (the typed field's dotted path), `text` and
 * `json` (what its two typed columns hold), `n` (the rows). Rows whose timestamp is NULL or
 * infinite are left out: they belong to no hour, and a reader counts them from the rows. A row
 * with no timestamp says its field is left out (`leftOutOf`).
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
 * field its set grouped (`boundedCountsSql`: a field whose values vary too much is left out,
 * rows with no hour saying so). On a day of the Studio bench's gateway (571,429 events, five fields), 0.1 -
 * 0.14 s of CPU against 0.63 - 0.77 for a UNION ALL of one GROUP BY per field (which read the file
 * once per field); the same 1,296 rows (docs/performance.md, "Studio's chart from the hour counts").
 *
 * @example
 * typedHourlySql('postgres_logs', 'project', ['parsed.error_severity']);
 * // "SELECT project, timestamp, field, text, json, n FROM (... GROUP BY GROUPING SETS (...))) ORDER BY ALL"
 */
export function typedHourlySql(relation: string, projectColumn: string, typedFields: readonly string[]): string {
  const sets = typedFields.map((path) => {
    const { text, json } = typedColumnNames(path);
    return { name: path, columns: [text, json].map(columnName) };
  });
  return boundedCountsSql(relation, projectColumn, sets, ['text', 'json']);
}

/**
 * The stored rollup a source with declared `typedPairs` gets beside its hour counts: its rows per
 * (project, hour, declared pair, values of the pair's two fields), each with its count. What a
 * count grouped by such a pair reads for a window's whole hours (the Explorer's Top Paths and
 * Error Count by User; src/bigquery/counts-per-group.ts) instead of the rows of a week.
 *
 * A pair of fields that vary per event (a path and a query string in real traffic) would make a
 * rollup as large as the file, and its grouping more memory than compaction has. So a pair is
 * counted in a file only when its groups stay few, as a typed field is in the hour counts
 * (`boundedCountsSql`); otherwise one row says it is left out, and a reader reads the file's rows
 * for it.
 *
 * Columns: the project column, `timestamp` (the hour's first instant), `field` (`typedPairName`),
 * `text` and `json` (the first field's typed columns), `text2` and `json2` (the second's), `n`.
 * Rows whose timestamp is NULL or infinite are left out, as in the hour counts; a row with no
 * timestamp says its pair is left out.
 *
 * @example
 * typedPairsName('edge_logs'); // 'edge_logs_typed_pairs'
 */
export function typedPairsName(relation: string): string {
  return `${relation}_typed_pairs`;
}

/**
 * Whether a source's rollup is one of its typed counts (`typedHourlyName`, `typedPairsName`):
 * derived, and bounded per file (a field may be left out of a file's counts), so read only by the
 * engine's hour-counts path, never by an endpoint's SQL by name (src/query/statement-reads.ts).
 *
 * @example
 * isTypedCounts('edge_logs', 'edge_logs_typed_hourly'); // true
 */
export function isTypedCounts(relation: string, rollup: string): boolean {
  return rollup === typedHourlyName(relation) || rollup === typedPairsName(relation);
}

/**
 * The most groups a field's (or a pair's) counts of one file may have (approximately): above it,
 * the file's counts leave it out and a reader reads the file's rows for it. 65,536 groups of a
 * few short values each take a few MB to group, well inside compaction's memory.
 */
export const TYPED_COUNTS_LIMIT = 65_536;

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
 * The pairs rollup's SQL over the source's relation (`typedPairsName`): one scan grouped by
 * GROUPING SETS, one set per declared pair, as the hour counts are (`boundedCountsSql`). On a day
 * of the Studio bench's gateway (571,429 events, one pair): see docs/performance.md, "The
 * Explorer's 7-day templates from the hour counts".
 *
 * @example
 * typedPairsSql('postgres_logs', 'project', [['parsed.user_name', 'parsed.error_severity']]);
 * // "SELECT project, timestamp, field, text, json, text2, json2, n FROM (... GROUP BY GROUPING SETS (...))) ORDER BY ALL"
 */
export function typedPairsSql(relation: string, projectColumn: string, typedPairs: ReadonlyArray<readonly [string, string]>): string {
  const sets = typedPairs.map(([a, b]) => {
    const [x, y] = [typedColumnNames(a), typedColumnNames(b)];
    return { name: typedPairName([a, b]), columns: [x.text, x.json, y.text, y.json].map(columnName) };
  });
  return boundedCountsSql(relation, projectColumn, sets, ['text', 'json', 'text2', 'json2']);
}

/**
 * One set of a counts rollup: its `field` (a typed field's path, a pair's name) and the columns it
 * groups by beside the project and the hour (SQL text).
 */
interface CountedSet {
  name: string;
  columns: readonly string[];
}

/**
 * The counts of a file's rows per (project, hour, set, values of the set's columns), every set in
 * one scan (GROUPING SETS), a set kept only where its groups stay few: counted first (approximately,
 * `approx_count_distinct` of their hash: a few KB whatever the values), a set's groups must number
 * at most `TYPED_COUNTS_LIMIT` (its grouping's memory) and at most half the file's events (read
 * instead of the rows, its rows are at most half as many). A set over the bounds has its columns
 * taken as NULL before the grouping, so it groups into one row per project and hour, and those
 * rows are given no hour (NULL `timestamp`: the rows a reader never reads, and those
 * stored-rollups.ts's `leftOutOf` names the set by). So one field whose values vary per event (a
 * gateway's query string) costs a few hundred rows instead of as many as the file's events, and
 * the others are still counted. The verdict is a column of its own in each set (`kept:<n>`, a
 * name no source column may take) so the rows tell it after the grouping. Rows whose timestamp is NULL
 * or infinite are left out (they belong to no hour: a reader counts them from the rows).
 */
function boundedCountsSql(relation: string, projectColumn: string, sets: readonly CountedSet[], outputs: readonly string[]): string {
  const hour = "date_trunc('hour', timestamp)";
  const named = sets.map((s, i) => ({ ...s, kept: `"kept:${i + 1}"`, values: s.columns.map((_, j) => `v${i + 1}_${j + 1}`), grouped: `g${i + 1}` }));
  // Counted on the text columns alone: a value's JSON follows its text but for its type (`200`
  // and `"200"`), so a few JSON values per text at most, and an approximate count is all it needs.
  const counted = named.map((s, i) => `approx_count_distinct(hash(${projectColumn}, ${hour}, ${s.columns.filter((_, j) => j % 2 === 0).join(', ')})) AS c${i + 1}`);
  const bounds = named.map((s, i) => `c${i + 1} <= ${TYPED_COUNTS_LIMIT} AND c${i + 1} * 2 <= events AS ${s.kept}`);
  // One row (a cross join with every row of the file): the verdict of each set, read by every row.
  const kept = `(SELECT ${bounds.join(', ')} FROM (SELECT ${counted.join(', ')}, count(*) AS events FROM ${relation} WHERE isfinite(timestamp)))`;
  const columns = named.flatMap((s) => [s.kept, ...s.columns.map((c, j) => `CASE WHEN ${s.kept} THEN ${c} END AS ${s.values[j]!}`)]);
  const groupingSets = named.map((s) => `(${[projectColumn, 'timestamp', s.kept, ...s.values].join(', ')})`).join(', ');
  // GROUPING(column) is 0 in the rows of the sets that group by it: one set's per row.
  const pick = (value: (s: (typeof named)[number]) => string) => `CASE ${named.map((s) => `WHEN ${s.grouped} = 0 THEN ${value(s)}`).join(' ')} END`;
  const picked = [
    projectColumn,
    `CASE WHEN ${pick((s) => s.kept)} THEN timestamp END AS timestamp`,
    `${pick((s) => `'${s.name}'`)} AS field`,
    ...outputs.map((out, j) => `${pick((s) => s.values[j]!)} AS ${out}`),
  ];
  // In one order whatever the grouping's threads did (a file's rollup is the same rows wherever it
  // is computed), the project and the hour first as the other rollups are.
  return `SELECT ${[projectColumn, 'timestamp', 'field', ...outputs, 'n'].join(', ')}
FROM (
SELECT ${picked.join(', ')}, n
FROM (
SELECT ${projectColumn}, timestamp, ${named.flatMap((s) => [s.kept, ...s.values, `GROUPING(${s.kept}) AS ${s.grouped}`]).join(', ')}, count(*) AS n
FROM (
SELECT ${projectColumn}, ${hour} AS timestamp, ${columns.join(', ')}
FROM ${relation}, ${kept} AS kept
WHERE isfinite(timestamp)
)
GROUP BY GROUPING SETS (${groupingSets})
)
)
ORDER BY ALL`;
}
