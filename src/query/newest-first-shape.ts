import type { NewestFirst } from '../engine/engine';
import type { ParserOutput } from '../sandbox/validate-caller-sql';
import { columnName, holds, holdsSubquery, isEmpty, type Node, present, selectsStar, statementNode } from './parse-tree';
import { rowsAreEvents } from './first-rows';

/** The bound values a `newestFirst` declaration names: the row limit and the inclusive upper bound. */
type NewestFirstOrder = Pick<NewestFirst, 'limit' | 'until'>;

/**
 * Why a statement declared `newestFirst` is not ordered and limited as the declaration says, or
 * null: its outermost SELECT ordered by `timestamp` descending first and limited by `$<limit>`
 * alone (no OFFSET). Engines walk such a statement's days newest first, stopping once a day can
 * hold none of its rows: a statement of another order would get a wrong answer, so it is refused
 * at start.
 *
 * @example
 * newestFirstOrderProblem({ json: await neutralSqlParser.serialize('SELECT * FROM edge_logs ORDER BY id LIMIT $limit') }, { limit: 'limit', until: 'until' });
 * // 'its outermost SELECT is not ordered by timestamp descending first'
 */
export function newestFirstOrderProblem(parsed: ParserOutput, order: NewestFirstOrder): string | null {
  const root = statementNode(parsed);
  if (root?.type !== 'SELECT_NODE') return 'it is not one SELECT';
  const [sort, limit, ...more] = (root.modifiers ?? []) as Node[];
  const [first] = (sort?.orders ?? []) as Node[];
  if (sort?.type !== 'ORDER_MODIFIER' || first?.type !== 'DESCENDING' || columnName(first.expression) !== 'timestamp') return 'its outermost SELECT is not ordered by timestamp descending first';
  if (limit?.type !== 'LIMIT_MODIFIER' || more.length || present(limit.offset) || !isParameter(limit.limit, order.limit))
    return `its outermost SELECT is not limited by $${order.limit} alone (no OFFSET)`;
  return null;
}

/**
 * Why the compacted files' heads (each project's newest rows of a file) may not stand in for the
 * files under a statement declared `newestFirst` (ordered and limited as it says: above), or
 * null when they may. They hold its rows when those are the newest events of one table filtered
 * by nothing but the project and time bounds, `$<until>` the one upper bound; a filter on any
 * other field (`status >= 500`) would make the heads miss older rows that match, so such a
 * statement is walked day by day over its files. The shape, read from DuckDB's parse tree:
 * SELECTs each over one table or CTE (no join, subquery, set operation, grouping or sample) of
 * column references or `*`, each WHERE a conjunction of such bounds (below), and the CTEs neither
 * ordered nor limited. (docs/definitions.md, "Newest first".)
 *
 * @example
 * newestFirstHeadsProblem({ json: await neutralSqlParser.serialize(logsAllSql) }, { limit: 'limit', until: 'until' }, ['project']); // null
 */
export function newestFirstHeadsProblem(parsed: ParserOutput, order: NewestFirstOrder, projectColumns: readonly string[]): string | null {
  const root = statementNode(parsed);
  if (root?.type !== 'SELECT_NODE') return 'it is not one SELECT';
  const ctes = ((root.cte_map as Node | undefined)?.map ?? []) as Array<{ value: { query: { node: Node } } }>;
  for (const cte of ctes) {
    const node = cte.value.query.node;
    if (node.type !== 'SELECT_NODE' || !isEmpty(node.modifiers)) return 'a CTE is not one SELECT without ORDER BY or LIMIT';
  }
  for (const node of [root, ...ctes.map((c) => c.value.query.node)]) {
    const problem = rowsProblem(node) ?? whereProblem(node.where_clause, order, projectColumns);
    if (problem) return problem;
  }
  return null;
}

/**
 * Why the compacted files' heads may not stand in for the files under a source-table template of
 * an endpoint declared `newestFirst`, or null when they may: `SELECT * FROM source_rows [WHERE
 * <bounds>]` (`rowsAreEvents`) whose filter reads the project (`project_column`) and time bounds
 * only, `$<until>` its one upper bound, as for the statement (above). A caller's newest rows of
 * such a table are then read from the heads; of another, from the files.
 *
 * @example
 * newestFirstTemplateProblem({ json: await neutralSqlParser.serialize('SELECT * FROM source_rows WHERE status >= 500') }, { limit: 'limit', until: 'until' }); // 'its filter reads status'
 */
export function newestFirstTemplateProblem(parsed: ParserOutput, order: NewestFirstOrder): string | null {
  if (!rowsAreEvents(parsed)) return 'it is not SELECT * FROM source_rows with a filter alone';
  return whereProblem(statementNode(parsed)!.where_clause, order, ['project_column']);
}

/** Why one SELECT does not keep each row an event of one table, or null. */
function rowsProblem(node: Node): string | null {
  const from = node.from_table as Node | undefined;
  if (from?.type !== 'BASE_TABLE' || present(from.sample) || present(from.at_clause)) return 'a SELECT reads something other than one table';
  if (!isEmpty(node.group_expressions) || !isEmpty(node.group_sets) || present(node.having) || present(node.qualify) || present(node.sample)) return 'a SELECT groups, samples or qualifies';
  if (node.aggregate_handling !== 'STANDARD_HANDLING') return 'a SELECT groups';
  // An aggregate or a window over column references would make rows of another kind; only the
  // tree's own names are read here (which functions aggregate is not in the tree), so the list is
  // column references or `*`.
  const list = (node.select_list ?? []) as Node[];
  if (!(selectsStar(node) || list.every((e) => e.class === 'COLUMN_REF'))) return 'a SELECT lists something other than columns';
  return null;
}

/**
 * Why a WHERE reads more than the project and time bounds, or null: a conjunction (AND) of
 * `<project column> = <value>`, `timestamp > | >= <value>` (a lower bound: anything but a column
 * or subquery) and `timestamp <= | < $<until>`, each alone or as `($p IS NULL OR <it>)` where it
 * compares with `$p`.
 */
function whereProblem(where: unknown, order: NewestFirstOrder, projectColumns: readonly string[]): string | null {
  if (!present(where)) return null;
  for (const conjunct of conjuncts(where as Node)) {
    const compared = conjunct.type === 'CONJUNCTION_OR' ? nullableBound(conjunct) : conjunct;
    const problem = compared ? boundProblem(compared, order, projectColumns) : 'its filter holds an OR that is not ($p IS NULL OR <a bound on $p>)';
    if (problem) return problem;
  }
  return null;
}

/** The parts of an AND, nested ones flattened. */
function conjuncts(node: Node): Node[] {
  return node.type === 'CONJUNCTION_AND' ? (node.children as Node[]).flatMap(conjuncts) : [node];
}

/** `<bound>` of `($p IS NULL OR <bound>)` when the bound compares with `$p`, else null. */
function nullableBound(or: Node): Node | null {
  const [isNull, bound, ...more] = or.children as Node[];
  if (more.length || isNull?.type !== 'OPERATOR_IS_NULL' || bound?.class !== 'COMPARISON') return null;
  const [parameter] = isNull.children as Node[];
  const name = parameter?.class === 'PARAMETER' ? parameter.identifier : undefined;
  return typeof name === 'string' && (isParameter(bound.left, name) || isParameter(bound.right, name)) ? bound : null;
}

/** The comparisons with the column on the right, turned around. */
const MIRRORED: Record<string, string> = {
  COMPARE_EQUAL: 'COMPARE_EQUAL',
  COMPARE_GREATERTHAN: 'COMPARE_LESSTHAN',
  COMPARE_GREATERTHANOREQUALTO: 'COMPARE_LESSTHANOREQUALTO',
  COMPARE_LESSTHAN: 'COMPARE_GREATERTHAN',
  COMPARE_LESSTHANOREQUALTO: 'COMPARE_GREATERTHANOREQUALTO',
};

/** Why one comparison is not a bound on the project or the time, or null. */
function boundProblem(node: Node, order: NewestFirstOrder, projectColumns: readonly string[]): string | null {
  const others = otherColumns(node, projectColumns);
  if (node.class !== 'COMPARISON' || !(String(node.type) in MIRRORED))
    return others.length ? `its filter reads ${others.join(', ')}` : 'its filter holds something other than bounds on the project and the time';
  const leftColumn = columnName(node.left);
  const [column, type, value] = leftColumn !== null ? [leftColumn, String(node.type), node.right] : [columnName(node.right), MIRRORED[String(node.type)]!, node.left];
  if (column === null) return others.length ? `its filter reads ${others.join(', ')}` : 'its filter compares something other than the project or the timestamp';
  if (holds(value, (n) => n.class === 'COLUMN_REF') || holdsSubquery(value)) return `its filter compares ${column} with another column or a subquery`;
  if (projectColumns.includes(column)) return type === 'COMPARE_EQUAL' ? null : `its filter bounds ${column} other than by =`;
  if (column !== 'timestamp') return `its filter reads ${column}`;
  if (type === 'COMPARE_GREATERTHAN' || type === 'COMPARE_GREATERTHANOREQUALTO') return null;
  if ((type === 'COMPARE_LESSTHAN' || type === 'COMPARE_LESSTHANOREQUALTO') && isParameter(value, order.until)) return null;
  return `its filter bounds timestamp from above by something other than $${order.until}`;
}

/** The columns a part of a filter reads besides the project and the timestamp, for messages. */
function otherColumns(node: Node, projectColumns: readonly string[]): string[] {
  const others = new Set<string>();
  holds(node, (n) => {
    const name = columnName(n) ?? (n.class === 'COLUMN_REF' ? (n.column_names as string[]).join('.') : null);
    if (name !== null && name !== 'timestamp' && !projectColumns.includes(name)) others.add(name);
    return false;
  });
  return [...others];
}

/** Whether an expression is the parameter `$<name>` (or a cast of it). */
function isParameter(node: unknown, name: string): boolean {
  const expression = node as Node | null | undefined;
  if (expression?.class === 'CAST') return isParameter(expression.child, name);
  return expression?.class === 'PARAMETER' && expression.identifier === name;
}

/**
 * The parameters (`$name`) a parsed text names, from its parse tree.
 *
 * @example
 * parametersOf({ json: await neutralSqlParser.serialize('SELECT * FROM source_rows WHERE timestamp > $after') }); // Set { 'after' }
 */
export function parametersOf(parsed: ParserOutput): Set<string> {
  const names = new Set<string>();
  holds(statementNode(parsed), (n) => {
    if (n.class === 'PARAMETER' && typeof n.identifier === 'string') names.add(n.identifier);
    return false;
  });
  return names;
}
