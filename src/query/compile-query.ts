import type { CompiledQuery, CompiledStatement, EngineTarget, QueryPlan } from '../engine/engine';
import type { AnyEndpointDefinition } from '../definitions/definition';
import { statementOf } from '../definitions/plan-query';
import { composeSandboxedSql } from '../sandbox/compose-sandboxed-sql';
import type { CheckedSql } from '../sandbox/validate-caller-sql';
import { callerColumnsRead, sourceTablesStatement } from '../sandbox/source-tables';
import type { SourceSet } from '../sources/source-set';
import { clickhouseStatement } from './clickhouse-statement';
import { dialectSql } from './dialect-sql';
import { compiledStatement, namedSources } from './statement-reads';
import type { NewestFirstHeads } from './check-definitions';

/**
 * One call of a definition compiled for an engine's target, in one place: its plan's bound values,
 * the statement in the target's dialect (a variant's, or with a caller's checked SELECT the
 * endpoint's own, the one it was checked against), what it reads, whether a newest-first one may
 * read compacted files' heads (`heads`, found at start: without it, never), and the caller's
 * SELECT (checked inside the wrapper capped at the endpoint's max rows: the same one runs). The
 * engine runs it as it is.
 *
 * @example
 * const query = compileCall(logsAll, planQuery(logsAll, params, new Date()), engine.target, sources, undefined, { statement: true, sourceTables: true, hourCounts: true });
 * await engine.run(query);
 */
export function compileCall(definition: AnyEndpointDefinition, plan: QueryPlan, target: EngineTarget, sources: SourceSet, caller?: CheckedSql, heads?: NewestFirstHeads): CompiledQuery {
  const statement = caller ? statementOf(definition) : plan.statement;
  // The heads stand in for the files under the statement's filter, or a caller's under the template's.
  const headsServe = (caller ? heads?.sourceTables : heads?.statement) === true;
  const withHeads = () => {
    const newestFirst = statement.newestFirst && { ...statement.newestFirst, heads: headsServe };
    return { ...plan, statement: newestFirst ? { ...statement, newestFirst } : statement };
  };
  // The hour counts only where the template's bounds are the ones the engine is told (`NewestFirstHeads.hourCounts`).
  const checkedOf = (c: CheckedSql): CheckedSql => (c.hourCounts !== undefined && heads?.hourCounts !== true ? { ...c, hourCounts: undefined } : c);
  // ClickHouse's text depends on a value too (every project's, when none is asked).
  if (!caller || target.dialect !== 'duckdb') return compileQuery(withHeads(), target, sources, caller && checkedOf(caller));
  // On DuckDB a caller's checked SELECT is compiled once per endpoint, target, source set, row cap
  // and use of the heads: each call binds its own values (and earliest instant) to the same texts.
  const byDefinition = getOrSet(COMPILED_CALLERS, caller, () => new WeakMap());
  const byTarget = getOrSet(byDefinition, definition, () => new WeakMap());
  const bySources = getOrSet(byTarget, target, () => new WeakMap());
  const byCap = getOrSet(bySources, sources, () => new Map());
  const key = `${plan.maxRows}:${headsServe}`;
  let texts = byCap.get(key);
  if (texts === undefined) byCap.set(key, (texts = compiledTexts(withHeads(), target, sources, checkedOf(caller))));
  return withValues(texts, plan);
}

/** What `compileQuery` makes of a plan that does not depend on its values: the texts, what they read. */
type CompiledTexts = Omit<CompiledQuery, 'params' | 'maxRows' | 'notBefore'>;

/**
 * Callers' checked SELECTs compiled, by the checked SELECT (one object per text and source set:
 * accept-caller-sql.ts), the endpoint, the target and the source set (objects an instance keeps),
 * then the row cap and whether the heads serve: a repeated caller's text with other bounds is not
 * composed again (Studio's lists, counts and charts; docs/performance.md, "No fixed cost per request").
 */
const COMPILED_CALLERS = new WeakMap<CheckedSql, WeakMap<AnyEndpointDefinition, WeakMap<EngineTarget, WeakMap<SourceSet, Map<string, CompiledTexts>>>>>();

function getOrSet<K extends object, V>(map: WeakMap<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

/** Compiled texts with one call's values. */
function withValues(texts: CompiledTexts, plan: QueryPlan): CompiledQuery {
  return {
    ...texts,
    params: { ...plan.params, max_rows: plan.maxRows },
    maxRows: plan.maxRows,
    ...(plan.notBefore === undefined ? {} : { notBefore: plan.notBefore }),
  };
}

/**
 * A planned query compiled for an engine's target: the default compiler (DuckDB's text, what it
 * reads), with the ClickHouse dialect overriding the statement's text (`clickhouse-statement.ts`).
 *
 * @example
 * const [projects] = catalogRequests(new Date()).requests;
 * await engine.run(compileQuery(projects, engine.target, sources));
 */
export function compileQuery(
  plan: QueryPlan,
  target: EngineTarget,
  sources: SourceSet,
  checked?: Pick<CheckedSql, 'sql' | 'sources' | 'typedColumns' | 'firstRows' | 'newestRows' | 'arraysFree' | 'hourCounts' | 'reads'>,
): CompiledQuery {
  return withValues(compiledTexts(plan, target, sources, checked), plan);
}

function compiledTexts(plan: QueryPlan, target: EngineTarget, sources: SourceSet, checked?: Parameters<typeof compileQuery>[3]): CompiledTexts {
  const caller = checked?.sql;
  const { statement } = plan;
  const compiled = target.dialect === 'clickhouse' ? { statement: clickhouseStatement(plan, target, checked) } : duckdbStatements(plan, sources, checked);
  // DuckDB runs a caller's SELECT over the statement's CTEs: composed once, here (the CTEs lexed once per text).
  const composed = caller === undefined ? undefined : target.dialect === 'clickhouse' ? caller : composeSandboxedSql(compiled.statement.sql, caller, plan.maxRows);
  // Its text without the arrays half, composed the same way: the engine picks it by its inputs.
  const arraysFree = checked?.arraysFree !== undefined && target.dialect === 'duckdb' ? composeSandboxedSql(compiled.statement.sql, checked.arraysFree, plan.maxRows) : undefined;
  return {
    name: statement.name,
    ...compiled,
    sources: compiled.statement.reads.map((r) => (target.dialect === 'clickhouse' ? target.sources : sources).get(r.source)),
    ...(statement.newestFirst ? { newestFirst: statement.newestFirst } : {}),
    ...(statement.projectParam ? { projectParam: statement.projectParam } : {}),
    ...('fallback' in compiled && statement.cheaperWhen && statement.projectParam ? { cheaperWhen: { cost: statement.cheaperWhen, projectParam: statement.projectParam } } : {}),
    ...(composed === undefined ? {} : { caller: composed }),
    ...(composed === undefined || arraysFree === undefined ? {} : { callerArraysFree: arraysFree }),
    // Over source tables only, whose rows are events: an endpoint's own CTE (a count per project)
    // over part of the events is not part of its answer.
    ...(composed !== undefined && checked?.firstRows !== undefined && target.dialect === 'duckdb' && statement.sourceTables?.duckdb !== undefined ? { firstRows: checked.firstRows } : {}),
    // Over a template whose filter the heads hold the rows of (`NewestFirst.heads`).
    ...(composed !== undefined && checked?.newestRows !== undefined && target.dialect === 'duckdb' && statement.newestFirst?.heads === true ? { newestRows: checked.newestRows } : {}),
    ...(composed !== undefined && target.dialect === 'duckdb' ? hourCountsOf(plan, sources, checked) : {}),
  };
}

/**
 * The caller's text reading the hour counts (src/bigquery/hour-counts.ts), composed over the source
 * tables with one more CTE, the hour counts' table: the template's rows of the engine's relation of
 * that name (the project filter applies as to events; its time bounds hold for every hour the engine
 * gives it, whole hours inside them). Only where the engine knows the template's time bounds: a
 * template whose filter reads the project and time bounds alone (`newestFirst.heads`), naming no
 * parameter but the declared ones (`NewestFirstHeads.hourCounts`, both told from its parse tree at start).
 */
function hourCountsOf(plan: QueryPlan, sources: SourceSet, checked: Pick<CheckedSql, 'sql' | 'sources' | 'typedColumns' | 'hourCounts'> | undefined): Pick<CompiledQuery, 'hourCounts'> {
  const h = checked?.hourCounts;
  const template = plan.statement.sourceTables?.duckdb;
  // `heads`: the template's filter reads the project and time bounds alone, told from its parse tree at start.
  if (h === undefined || template === undefined || plan.statement.newestFirst?.heads !== true) return {};
  const named = namedSources(checked!, sources);
  const source = named.find((s) => h.hourly in s.rollups);
  if (named.length !== 1 || source === undefined) return {};
  const statement = sourceTablesStatement(template, named, checked!.typedColumns ?? false, h.hourly);
  return {
    hourCounts: {
      caller: composeSandboxedSql(statement, h.sql, plan.maxRows),
      callerArraysFree: composeSandboxedSql(statement, h.arraysFree, plan.maxRows),
      hourly: h.hourly,
      field: h.field,
      from: h.from,
      until: h.until,
    },
  };
}

/**
 * DuckDB's statement and a variant's fallback. A caller's SQL over source tables runs over a table
 * per source it names (docs/sandboxing.md, "Source tables"), no others.
 */
function duckdbStatements(
  plan: QueryPlan,
  sources: SourceSet,
  caller: Pick<CheckedSql, 'sql' | 'sources' | 'typedColumns' | 'arraysFree' | 'reads'> | undefined,
): { statement: CompiledStatement; fallback?: CompiledStatement; callerColumns?: ReadonlyMap<string, ReadonlySet<string>> } {
  const { statement } = plan;
  const tables = caller !== undefined ? statement.sourceTables?.duckdb : undefined;
  const fallback = statement.fallback?.duckdb;
  const fallbackOf = fallback === undefined ? {} : { fallback: compiledStatement(fallback, sources) };
  if (tables === undefined) return { statement: compiledStatement(dialectSql(statement, 'duckdb'), sources), ...fallbackOf };
  // Each table with the columns the caller's SELECT names (and its relation with those its filter names too).
  const named = namedSources(caller!, sources);
  const typed = caller!.typedColumns ?? false;
  const read = callerColumnsRead(tables, named, caller!.reads, typed);
  const sql = sourceTablesStatement(tables, named, typed, undefined, new Map([...read].map(([s, r]) => [s, r.table])));
  const callerColumns = new Map([...read].map(([s, r]) => [s.name, r.relation]));
  return { statement: compiledStatement(sql, sources), ...fallbackOf, ...(callerColumns.size ? { callerColumns } : {}) };
}
