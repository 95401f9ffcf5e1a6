import type { EngineTarget } from '../engine/engine';
import { fullQuerySql } from '../engine/duckdb/statement-sql';
import type { SourceFiles } from '../duckdb/source-relations';
import { InvalidOptionError } from '../errors';
import type { EndpointSet } from '../definitions/registry';
import { statementOf } from '../definitions/plan-query';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import type { CallerSqlCheck } from './check-caller-sql';
import type { SqlParser } from './sql-parser';
import { compiledStatement, sourcesReadBy } from './statement-reads';
import { newestFirstHeadsProblem, newestFirstOrderProblem, newestFirstTemplateProblem, parametersOf } from './newest-first-shape';
import type { AnyEndpointDefinition } from '../definitions/definition';

/**
 * Every definition runs on the target: it has the target's SQL, DuckDB's SQL prepares over empty
 * sources (each variant's too), a `newestFirst` declaration holds of its DuckDB SQL (and its
 * source-table template), and a sandboxable endpoint takes a caller's SELECT. A definition
 * that cannot work fails the start, naming the endpoint and the option.
 *
 * @example
 * await checkDefinitions(endpointSet([]), { dialect: 'duckdb' }, { sources: BUILT_IN_SOURCE_SET, parser: neutralSqlParser, callers, sandboxable: new Set() });
 */
export async function checkDefinitions(
  endpoints: EndpointSet,
  target: EngineTarget,
  context: { sources: SourceSet; parser: SqlParser; callers: CallerSqlCheck; sandboxable: ReadonlySet<string> },
): Promise<ReadonlyMap<string, NewestFirstHeads>> {
  const dialect = target.dialect;
  const heads = new Map<string, NewestFirstHeads>();
  for (const d of endpoints.list) {
    if (d.sql[dialect] === undefined) {
      throw new InvalidOptionError(`endpoints["${d.name}"].sql.${dialect}`, `Endpoint "${d.name}" has no ${dialect} SQL, and the engine is ${dialect}: add sql.${dialect}.`);
    }
    for (const variant of dialect === 'duckdb' ? [null, ...Object.keys(d.variants ?? {})] : []) {
      const sql = statementOf(d, variant).sql.duckdb;
      const problem = sql === undefined ? `${d.name} has no DuckDB SQL.` : await prepares(sql, context.sources, context.parser);
      const which = variant === null ? `sql.${dialect}` : `variants.${variant}.${dialect}`;
      if (problem)
        throw new InvalidOptionError(
          `endpoints["${d.name}"].${which}`,
          `Endpoint "${d.name}" cannot work: its ${dialect} SQL${variant === null ? '' : ` (variant ${variant})`} does not prepare: ${problem}`,
        );
    }
    if (d.newestFirst) heads.set(d.name, await newestFirstHeads(d, context.sources, context.parser));
    // A sandboxable endpoint whose SQL cannot take a caller's SELECT (no CTEs) fails now, not at its first call.
    if (context.sandboxable.has(d.name)) {
      try {
        await context.callers.check(statementOf(d), 'SELECT 1', 1, context.sources);
      } catch (error) {
        const option = d.sandboxable ? `endpoints["${d.name}"].sandboxable` : 'sandboxable';
        throw new InvalidOptionError(option, `Endpoint "${d.name}" cannot be sandboxed: ${(error as Error)?.message ?? error}`, { cause: error });
      }
    }
  }
  return heads;
}

/** Null when a statement's DuckDB SQL prepares over empty relations of the sources it reads, else why not. */
function prepares(sql: string, sources: SourceSet, parser: SqlParser): Promise<string | null> {
  const empty = new Map<SourceDescriptor, SourceFiles>();
  for (const source of sourcesReadBy(sql, sources)) empty.set(source, { ndjson: [], parquet: [], parquetTypes: new Map() });
  return parser.prepare(fullQuerySql(compiledStatement(sql, sources), empty));
}

/** Whether the compacted files' heads may stand in for the files under an endpoint's `newestFirst` (newest-first-shape.ts). */
export interface NewestFirstHeads {
  /** Under its statement (every variant's). */
  readonly statement: boolean;
  /** Under its source-table template: a caller's newest rows. */
  readonly sourceTables: boolean;
  /**
   * Under its source-table template, and the template names no parameter but the definition's
   * project parameter, `notBefore` and `newestFirst.until`: the bounds an engine is told of, so a
   * caller's chart may be given the hour counts of whole hours inside them (compile-query.ts).
   */
  readonly hourCounts: boolean;
}

/**
 * What a `newestFirst` declaration lets engines do, found from DuckDB's parse trees: walk the
 * statement's days newest first (a statement not ordered and limited as declared fails the start,
 * naming what breaks it), and read compacted files' heads instead of the files where the filter
 * reads only the project and time bounds (for the statement, and for a caller's newest rows under
 * the source-table template); where it reads more, the files are read.
 */
async function newestFirstHeads(d: AnyEndpointDefinition, sources: SourceSet, parser: SqlParser): Promise<NewestFirstHeads> {
  const order = d.newestFirst!;
  const parsed = async (sql: string) =>
    parser.serialize(sql).then(
      (json) => ({ json }),
      (failed: unknown) => ({ failed }),
    );
  let statement = true;
  for (const variant of [null, ...Object.keys(d.variants ?? {})]) {
    const sql = statementOf(d, variant).sql.duckdb!;
    const tree = await parsed(sql);
    const refused = newestFirstOrderProblem(tree, order);
    if (refused) {
      throw new InvalidOptionError(
        `endpoints["${d.name}"].newestFirst`,
        `Endpoint "${d.name}" declares newestFirst, but its DuckDB SQL${variant === null ? '' : ` (variant ${variant})`} is not the newest rows ordered by timestamp descending and limited by $${order.limit}: ${refused}.`,
      );
    }
    statement &&=
      newestFirstHeadsProblem(
        tree,
        order,
        sourcesReadBy(sql, sources).map((s) => s.projectColumn),
      ) === null;
  }
  const template = d.sourceTables?.duckdb;
  if (template === undefined) return { statement, sourceTables: false, hourCounts: false };
  const tree = await parsed(template);
  const sourceTables = newestFirstTemplateProblem(tree, order) === null;
  const declared = new Set([d.projectParam, d.notBefore, order.until]);
  return { statement, sourceTables, hourCounts: sourceTables && d.notBefore !== undefined && [...parametersOf(tree)].every((name) => declared.has(name)) };
}
