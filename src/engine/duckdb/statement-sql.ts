import type { CompiledStatement } from '../engine';
import type { ListedFile } from '../../files/list-glob';
import type { ReadSet } from '../../files/source-reader';
import { relationColumns, sourceRelation, type SourceFiles } from '../../duckdb/source-relations';
import { columnsNamed } from '../../sql/columns-named';
import { sqlStringList } from '../../duckdb/sql-literal';
import type { SourceDescriptor, SourceRollup } from '../../sources/source-descriptor';

// The SQL DuckDB runs for a compiled statement: the relations and rollups it reads (found when it
// was compiled, src/query/statement-reads.ts) over a read's files, put before it as CTEs.

/**
 * The complete SQL DuckDB runs for a statement over the given files: each source relation it
 * reads as a CTE, then the statement itself. Parameters stay named placeholders. With `caller`
 * (a compiled query's: the statement's CTEs, then the caller's SELECT under its wrapper), that runs
 * instead (docs/sandboxing.md).
 *
 * @example
 * fullQuerySql(compiledStatement('SELECT count(*) FROM edge_logs', BUILT_IN_SOURCE_SET), new Map([[edgeLogs, { ndjson: ['a.ndjson'], parquet: [], parquetTypes: new Map() }]]));
 */
export function fullQuerySql(statement: CompiledStatement, files: ReadonlyMap<SourceDescriptor, SourceFiles>, caller?: string, callerColumns?: ReadonlyMap<string, ReadonlySet<string>>): string {
  const { sql } = statement;
  const sources = [...files];
  // Each rollup the statement names follows its source's relation, as its SQL over that relation.
  // An endpoint's statement gets the relation with only the columns it names; a caller's SELECT
  // reads tables of its own over it: every column, or those its tables read (`callerColumns`).
  const relations = sources.flatMap(([source, f]) => [
    ...(caller === undefined && onlyStoredRollups(statement, source, f)
      ? []
      : [`${source.relation} AS (\n${sourceRelation(source, f, caller === undefined ? columnsReadBy(statement, source) : callerRead(callerColumns, source))}\n)`]),
    ...rollupsNamedBy(statement, source).map((name) => `${name} AS (\n${rollupRelation(source, f, name, source.rollups[name]!)}\n)`),
    // A caller's chart's hour counts: the stored rollups of the files the engine chose, whole hours of the window only.
    ...(f.hourly ? [`${f.hourly.name} AS (\nSELECT * FROM read_parquet(${sqlStringList(f.hourly.companions)}) WHERE ${f.hourly.where}\n)`] : []),
  ]);
  const own = /^((?:\s*--[^\n]*\n)*)\s*WITH\s/i.exec(sql);
  // A statement whose CTEs shadow a relation (logs.all's `edge_logs`, already limited to one
  // project) runs inside the relations, as does every caller's SELECT: the relations themselves
  // are then out of their reach.
  if (caller !== undefined || statement.shadows) {
    const inner = caller ?? sql;
    return relations.length ? `WITH ${relations.join(',\n')}\nSELECT * FROM (\n${inner}\n)` : inner;
  }
  if (!relations.length) return sql;
  // A statement with CTEs of its own (`WITH buckets AS ...`) gets the relations as its first CTEs.
  return own ? `${own[1]}WITH ${relations.join(',\n')},\n${sql.slice(own[0].length)}` : `WITH ${relations.join(',\n')}\n${sql}`;
}

/** The relation's columns a caller's text reads: those compiled for it (`CompiledQuery.callerColumns`), else every one. */
function callerRead(callerColumns: ReadonlyMap<string, ReadonlySet<string>> | undefined, source: SourceDescriptor): { columns?: ReadonlySet<string> } {
  const columns = callerColumns?.get(source.name);
  return columns === undefined ? {} : { columns };
}

/**
 * Whether a statement reads only rollups of a source, each with stored files: its relation is then
 * unused (a stored rollup's part computed from events builds a relation of its own:
 * `rollupRelation`), and DuckDB would still bind it on every run (its files' schemas: about 0.5 ms
 * of CPU a call; docs/performance.md, "The relation left out where only stored rollups are read").
 */
function onlyStoredRollups(statement: CompiledStatement, source: SourceDescriptor, files: SourceFiles): boolean {
  const read = statement.reads.find((r) => r.source === source.name);
  return read?.relation === false && read.rollups.length > 0 && read.rollups.every((name) => (files.stored?.[name]?.companions.length ?? 0) > 0);
}

/**
 * Kept columns per source descriptor (one with more typed fields has more columns) and texts
 * (bounded: the endpoints' texts and their newest-first forms).
 */
const KEPT = new WeakMap<SourceDescriptor, Map<string, { columns?: ReadonlySet<string> }>>();

/**
 * The columns of a source's relation a statement reads (`columnsNamed`): those its text names and
 * those the SQL of each rollup it names does (a rollup not stored is computed over the relation),
 * with `timestamp`, which the engine's own conditions name (two-phase-newest.ts); none given
 * (every column) when one of them may read others unnamed.
 */
function columnsReadBy(statement: CompiledStatement, source: SourceDescriptor): { columns?: ReadonlySet<string> } {
  const rollups = rollupsNamedBy(statement, source).map((name) => source.rollups[name]!);
  return keptFor([statement.sql, ...rollups.flatMap((r) => [r.sql, ...(r.rest === undefined ? [] : [r.rest])])], source);
}

/** The columns of a source's relation that SQL texts over it name, with `timestamp` (see `columnsReadBy`). */
function keptFor(texts: readonly string[], source: SourceDescriptor): { columns?: ReadonlySet<string> } {
  let known = KEPT.get(source);
  if (!known) KEPT.set(source, (known = new Map()));
  const key = texts.join('\0');
  let kept = known.get(key);
  if (!kept) {
    const all = relationColumns(source).map(([name]) => name);
    const named = texts.map((text) => columnsNamed(text, source.relation, all));
    kept = named.some((n) => n === null) ? {} : { columns: new Set([...named.flatMap((n) => [...n!]), 'timestamp']) };
    if (known.size >= 256) known.clear();
    known.set(key, kept);
  }
  return kept;
}

/**
 * A rollup's relation (docs/definitions.md, "Rollups"): the stored rollups of the Parquet files
 * that have one, and the rollup's SQL over everything else the source reads (NDJSON, byte ranges,
 * memory, Parquet files without it), whose relation is built by `sourceRelation` as the source's
 * is. Rows of one bucket may come from several parts: the endpoints' SQL re-aggregates. A rollup
 * with a `rest` has the columns of both SELECTs whatever is stored (a column only one gives is
 * NULL in the other's rows), so a statement binds the same way on every state of the data.
 */
function rollupRelation(source: SourceDescriptor, files: SourceFiles, name: string, rollup: SourceRollup): string {
  const stored = files.stored?.[name];
  // Over the relation with only the columns the rollup's SQL names (an empty one is bound on every query).
  const computedBy = (sql: string, over: SourceFiles) => `SELECT * FROM (\nWITH ${source.relation} AS (\n${sourceRelation(source, over, keptFor([sql], source))}\n)\n${sql}\n)`;
  // Over no events: only the rest's columns, for the parts that do not compute it.
  const restColumns = rollup.rest === undefined ? [] : [computedBy(rollup.rest, { ndjson: [], parquet: [], parquetTypes: new Map() })];
  if (!stored?.companions.length) return [rollup.rest === undefined ? rollup.sql : `SELECT * FROM (\n${rollup.sql}\n)`, ...restColumns].join('\nUNION ALL BY NAME\n');
  // The rows kept for the statement's text stand for the companions, bound as a list (narrowed-rollups.ts).
  const read = stored.keys ? `SELECT unnest($${stored.keys.param}) AS ${stored.keys.column}` : `SELECT * FROM read_parquet(${sqlStringList(stored.companions)})`;
  const covered = new Set(stored.dataFiles);
  const rest: SourceFiles = { ...files, parquet: files.parquet.filter((p) => !covered.has(p)) };
  // The memory tables' rows come with their rollup, kept per insert: read, not computed.
  const held = rest.where === undefined ? rest.memory?.rollups?.[name] : undefined;
  const others: SourceFiles = held === undefined ? rest : { ...rest, memory: undefined };
  // What is not stored is computed on every query: by the rollup's cheaper SQL when it has one.
  const computed = [
    ...(others.ndjson.length || others.parquet.length || others.memory || others.held?.length ? [computedBy(rollup.rest ?? rollup.sql, others)] : []),
    ...(held === undefined ? [] : [held]),
  ];
  return [read, ...(computed.length ? computed : restColumns)].join('\nUNION ALL BY NAME\n');
}

/**
 * Whether a rollup variant may run over these reads: every Parquet file of the window has the stored
 * rollups the statement names, and there is at least one (docs/definitions.md, "Rollups"). Otherwise
 * the rollup would be computed mostly from raw rows, slower than the endpoint's base statement.
 */
export function rollupsStored(statement: CompiledStatement, reads: ReadonlyMap<SourceDescriptor, ReadSet>): boolean {
  for (const [source, read] of reads) {
    for (const name of rollupsNamedBy(statement, source)) {
      if (read.parquet.length === 0 || read.parquet.some((f) => !f.rollups?.[name])) return false;
    }
  }
  return true;
}

/**
 * The Parquet files whose rows a statement reads: all of them when it names the source's relation,
 * else (it reads rollups only) those lacking a stored rollup it names, computed from their rows.
 */
export function rowsRead(statement: CompiledStatement, source: SourceDescriptor, read: ReadSet): ListedFile[] {
  if (statement.reads.find((r) => r.source === source.name)?.relation) return read.parquet;
  const rollups = rollupsNamedBy(statement, source);
  return read.parquet.filter((f) => rollups.some((name) => !f.rollups?.[name]));
}

/** The rollups of a source a statement reads by name. */
export function rollupsNamedBy(statement: CompiledStatement, source: SourceDescriptor): readonly string[] {
  return statement.reads.find((r) => r.source === source.name)?.rollups ?? [];
}
