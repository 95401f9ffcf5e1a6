import type { CompiledStatement, SourceRead, SqlDialect } from '../engine/engine';
import { splitEndpointSql } from '../sandbox/compose-sandboxed-sql';
import { sourcesNamedBy } from '../sandbox/source-tables';
import type { CheckedSql } from '../sandbox/validate-caller-sql';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { isTypedCounts } from '../sources/typed-hourly';
import { codeOnly } from '../sql/sql-scan';

// What a statement reads by name, found once per text: the sources whose relation or rollups it
// names (a name it only defines as a CTE of its own does not count), and whether its CTEs shadow
// a relation. Engines get it compiled; none scans a statement's text again.

/** Compiled statements by text, per source set (bounded: a caller's source tables vary with the text). */
const COMPILED = new WeakMap<SourceSet, Map<string, CompiledStatement>>();

/**
 * A statement's text with what it reads among `sources` (kept per text and set). Only DuckDB runs
 * a statement inside the relations its CTEs shadow (ClickHouse's `WITH` is not split).
 *
 * @example
 * compiledStatement('SELECT count(*) FROM edge_logs', BUILT_IN_SOURCE_SET).reads;
 * // [{ source: 'edgeLogs', relation: true, rollups: [] }]
 */
export function compiledStatement(sql: string, sources: SourceSet, dialect: SqlDialect = 'duckdb'): CompiledStatement {
  let bySql = COMPILED.get(sources);
  if (!bySql) COMPILED.set(sources, (bySql = new Map()));
  const key = `${dialect}\0${sql}`;
  let known = bySql.get(key);
  if (!known) {
    if (bySql.size >= 256) bySql.clear();
    bySql.set(key, (known = { sql, reads: readsOf(sql, sources), shadows: dialect === 'duckdb' && shadows(sql, sources) }));
  }
  return known;
}

/**
 * The sources a statement reads: those whose relation it names (`FROM edge_logs`, a join, a CTE
 * over it) or one of whose rollups it names (read over its source's relation), not counting a
 * name it only defines as a CTE of its own (logs.all's empty `function_edge_logs`). Reading a
 * source costs a listing of its files; naming one it does not have would fail the statement at
 * start (definitions are prepared then).
 *
 * @example
 * sourcesReadBy('SELECT count(*) FROM edge_logs', BUILT_IN_SOURCE_SET); // [the edge_logs descriptor]
 */
export function sourcesReadBy(sql: string, sources: SourceSet): SourceDescriptor[] {
  return compiledStatement(sql, sources).reads.map((r) => sources.get(r.source));
}

function readsOf(sql: string, sources: SourceSet): SourceRead[] {
  return sources.list.flatMap((d) => {
    // Not the typed counts: a file's may leave a field out (typed-hourly.ts), so they are not every
    // event's counts; only the engine reads them, for the fields they hold. A statement naming one
    // fails as naming any unknown table does.
    const rollups = Object.keys(d.rollups).filter((name) => !isTypedCounts(d.relation, name) && namesRelation(sql, name));
    if (!namesRelation(sql, d.relation) && !rollups.length) return [];
    return [{ source: d.name, relation: namesRelation(sql, d.relation), rollups }];
  });
}

/** Whether a statement reads a relation by name (not only defines a CTE of that name). */
function namesRelation(sql: string, relation: string): boolean {
  const uses = [...codeOnly(sql).matchAll(new RegExp(`(?<![\\w$.])${relation}(?![\\w(])(\\s+AS\\s*\\()?`, 'gi'))];
  return uses.some((m) => m[1] === undefined);
}

/** Whether a statement's own CTEs (`WITH edge_logs AS ...`) shadow a source's relation. */
function shadows(sql: string, sources: SourceSet): boolean {
  if (!/^((?:\s*--[^\n]*\n)*)\s*WITH\s/i.test(sql)) return false;
  const ctes = splitEndpointSql(sql).tables;
  return ctes.some((t) => sources.list.some((source) => source.relation === t));
}

/**
 * The sources a caller's SELECT over source tables names: as its check found them (else found now).
 *
 * @example
 * namedSources({ sql: 'select count(*) from edge_logs', sources: ['edgeLogs'] }, BUILT_IN_SOURCE_SET); // [edgeLogs]
 */
export function namedSources(caller: Pick<CheckedSql, 'sql' | 'sources'>, sources: SourceSet): SourceDescriptor[] {
  return caller.sources ? caller.sources.map((name) => sources.get(name)) : sourcesNamedBy(caller.sql, sources.list);
}
