import type { CompiledStatement, EngineTarget, QueryPlan } from '../engine/engine';
import { stripComments } from '../engine/clickhouse/query-files';
import { sandboxedSelect } from '../sandbox/compose-sandboxed-sql';
import type { CheckedSql } from '../sandbox/validate-caller-sql';
import { dialectSql } from './dialect-sql';
import { everyProject } from './every-project';
import { compiledStatement, namedSources } from './statement-reads';

/**
 * The ClickHouse dialect's part of compiling (what it spells otherwise): a statement with each
 * source relation it reads replaced by the table's full name and its comments removed; a caller's
 * translated SELECT (its tables already subqueries, its strings as sent) under the wrapper capping
 * its rows; and with `singleProject` (the project bound NULL) the project's tests gone.
 *
 * @example
 * clickhouseStatement(plan, engine.target, checked?.sql).sql; // 'SELECT ... FROM logs.edge_logs WHERE ...'
 */
export function clickhouseStatement(plan: QueryPlan, target: Extract<EngineTarget, { dialect: 'clickhouse' }>, checked: Pick<CheckedSql, 'sql' | 'sources'> | undefined): CompiledStatement {
  const caller = checked?.sql;
  const { statement } = plan;
  const text = caller !== undefined ? sandboxedSelect(caller, plan.maxRows) : dialectSql(statement, 'clickhouse');
  const project = statement.projectParam;
  // With singleProject the project is NULL: its comparisons go, every project's rows count.
  const scoped = project !== undefined && plan.params[project] === null ? everyProject(text, project) : text;
  if (caller !== undefined) {
    const reads = namedSources(checked!, target.sources).map((d) => ({ source: d.name, relation: true, rollups: [] }));
    return { sql: scoped, reads, shadows: false };
  }
  return { ...compiledStatement(text, target.sources, 'clickhouse'), sql: preparedQuerySql(scoped, target.tables) };
}

/**
 * The SQL sent for a statement: comments removed (18.x takes the query in the URL when it comes
 * with external data, so shorter is better) and each source relation it reads (`FROM edge_logs`,
 * `JOIN function_edge_logs`) replaced by the configured table's full name.
 *
 * @example
 * preparedQuerySql('SELECT 1 FROM edge_logs', new Map([['edge_logs', 'logs.edge_logs']])); // 'SELECT 1 FROM logs.edge_logs'
 */
export function preparedQuerySql(sql: string, tables: ReadonlyMap<string, string>): string {
  let out = stripComments(sql);
  for (const [relation, qualifiedTable] of tables) {
    out = out.replace(new RegExp(`\\b(FROM|JOIN)\\s+${relation}\\b`, 'gi'), (_, keyword: string) => `${keyword} ${qualifiedTable}`);
  }
  return out;
}
