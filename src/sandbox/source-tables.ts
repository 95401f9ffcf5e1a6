import type { SourceColumn, SourceDescriptor } from '../sources/source-descriptor';
import type { ColumnType } from '../sql/column-types';
import { codeOnly } from '../sql/sql-scan';
import { typedColumnsOf } from '../sources/typed-fields';
import { columnName } from '../sql/column-name';
import { columnsNamed } from '../sql/columns-named';
import type { TableReads } from './table-reads';

/** The placeholders of a source-table template (queries/<dialect>/logs.all.tables.sql). */
const SOURCE_ROWS = /\bsource_rows\b/g;
const PROJECT_COLUMN = /\bproject_column\b/g;

/**
 * The columns a caller's SQL sees in a source's table: the event's own fields (`id`, `timestamp`,
 * `event_message`, `metadata`) and the source's other top-level fields (`project`), as Logflare's
 * tables have them. Fields a descriptor derives from inside `metadata` (`request_path`) are how
 * the source is stored, not what events hold: they stay out (a caller reads them from `metadata`).
 *
 * @example
 * sourceTableColumns(edgeLogs).map((c) => c.name); // ['id', 'timestamp', 'event_message', 'metadata', 'project']
 */
export function sourceTableColumns(source: SourceDescriptor): readonly SourceColumn[] {
  return source.columns.filter((c) => c.path === null);
}

/** A source-table template with a source's relation (or table) and project column in place. */
export function fillSourceTable(template: string, source: SourceDescriptor, rows: string = source.relation): string {
  return template.replace(SOURCE_ROWS, rows).replace(PROJECT_COLUMN, source.projectColumn);
}

/**
 * The WITH clause of a caller's SQL over source tables (DuckDB): one CTE per source, named by its
 * relation, holding the template's rows with the source's own columns. Each CTE shadows the
 * engine's relation of the same name, which it reads (the engine runs the statement inside the
 * relations). With `typedColumns` (a translated BigQuery SELECT: it alone reads them) each CTE
 * also has its source's typed columns (src/sources/typed-fields.ts).
 *
 * @example
 * sourceTablesStatement(querySql('duckdb', 'logs.all.tables'), [edgeLogs]);
 * // 'WITH edge_logs AS (SELECT id, timestamp, event_message, metadata, project FROM (SELECT * FROM edge_logs WHERE ...))\nSELECT 1'
 */
export function sourceTablesStatement(
  template: string,
  sources: readonly SourceDescriptor[],
  typedColumns = false,
  hourly?: string,
  read?: ReadonlyMap<SourceDescriptor, ReadonlySet<string>>,
): string {
  if (!sources.length) return 'SELECT 1';
  const body = templateBody(template);
  // The hour counts of the one source that has them (src/sources/typed-hourly.ts), as its events are.
  const hours = hourly === undefined ? [] : sources.filter((s) => hourly in s.rollups).map((s) => `${hourly} AS (\n${fillSourceTable(body, s, hourly)}\n)`);
  const ctes = sources.map((s) => {
    const kept = read?.get(s);
    const columns = tableColumnNames(s, typedColumns).filter((name) => !kept || kept.has(name));
    return `${s.relation} AS (SELECT ${columns.map(columnName).join(', ')} FROM (\n${fillSourceTable(body, s)}\n))`;
  });
  // The statement's own SELECT never runs: a caller's SELECT replaces it.
  return `WITH ${[...ctes, ...hours].join(',\n')}\nSELECT 1`;
}

/** A source table's columns by name, its typed ones (unquoted) after its own when the caller reads them. */
function tableColumnNames(source: SourceDescriptor, typedColumns: boolean): string[] {
  return [...sourceTableColumns(source).map((c) => c.name), ...(typedColumns ? typedColumnsOf(source).map(([name]) => name) : [])];
}

/** A template's text without its leading comment lines. */
function templateBody(template: string): string {
  return template.trim().replace(/^(\s*--[^\n]*\n)+/, '');
}

/**
 * The columns of each source table a caller's SQL reads, and of each source's relation its table
 * reads, where the SQL names every column it reads of that table (`reads`, told from the tree the
 * sandbox checked: table-reads.ts) and the template is `SELECT * FROM source_rows [WHERE ...]`:
 * `table`, the table's columns it names, with `timestamp` (a table of no column cannot be
 * written); `relation`, those and the columns the template's filter names. A source whose table
 * it reads whole (as a value, with column aliases, in a natural join, by position) or by a `*` is
 * left out: its table and relation keep every column. In a translated BigQuery SELECT
 * (`typedColumns`) a `*` does not count: the translation writes a caller's `*` out as the table's
 * columns (src/bigquery/query.ts, `star`), and the only `*` it prints are its own ranges'
 * (print-duckdb.ts), each passing the rows on to a SELECT that names every column it reads. Why:
 * DuckDB's planner reads the statistics of every column a Parquet scan projects from every row
 * group before it drops the unused ones (its join-order pass), so Studio's single log read through
 * a table of every column took about 1 ms more a call (docs/performance.md, "The source tables
 * with the columns a caller names").
 *
 * @example
 * callerColumnsRead(querySql('duckdb', 'logs.all.tables'), [edgeLogs], checked.reads, false);
 * // select id from edge_logs where id = 'a' limit 1 ->
 * // Map { edgeLogs => { table: Set { 'id', 'timestamp' }, relation: Set { 'id', 'timestamp', 'project' } } }
 */
export function callerColumnsRead(
  template: string,
  sources: readonly SourceDescriptor[],
  reads: TableReads | undefined,
  typedColumns: boolean,
): Map<SourceDescriptor, { table: ReadonlySet<string>; relation: ReadonlySet<string> }> {
  const read = new Map<SourceDescriptor, { table: ReadonlySet<string>; relation: ReadonlySet<string> }>();
  if (reads === undefined) return read;
  const body = templateBody(template);
  for (const source of sources) {
    // The template's rows are the relation's as they are; its filter may name other columns.
    const filled = fillSourceTable(body, source);
    const star = new RegExp(`^SELECT\\s+\\*\\s+FROM\\s+${source.relation}\\b`, 'i').exec(filled);
    if (!star) continue;
    const filter = columnsNamed(filled.slice(star[0].length), source.relation, [...source.columns.map((c) => c.name), ...typedColumnsOf(source).map(([name]) => name)]);
    const relation = source.relation.toLowerCase();
    if (filter === null || reads.whole.has(relation) || (!typedColumns && reads.starred.has(relation))) continue;
    const named = tableColumnNames(source, typedColumns).filter((name) => reads.names.has(name.toLowerCase()));
    const table = new Set(['timestamp', ...named]);
    read.set(source, { table, relation: new Set([...table, ...filter]) });
  }
  return read;
}

/**
 * The sources a caller's SQL names, among these (each read costs a listing of its files): a
 * relation's name in its code (strings and comments aside), bare or double-quoted, in any case.
 * A quoted name inside a string counts too: one table more than needed, never one too few.
 */
export function sourcesNamedBy(sql: string, sources: readonly SourceDescriptor[]): SourceDescriptor[] {
  const code = codeOnly(sql).toLowerCase();
  const text = sql.toLowerCase();
  return sources.filter((s) => new RegExp(`(?<![\\w$])${s.relation}(?![\\w$])`).test(code) || text.includes(`"${s.relation}"`));
}

/** The kinds of a source table's columns, by name (what a translator of callers' SQL reads). */
export function sourceTableKinds(source: SourceDescriptor): Record<string, ColumnType> {
  return Object.fromEntries(sourceTableColumns(source).map((c) => [c.name, c.type]));
}
