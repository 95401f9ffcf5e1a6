import type { ParserOutput } from '../sandbox/validate-caller-sql';
import { holdsSubquery, isEmpty, type Node, present, selectsStar, statementNode } from './parse-tree';

/**
 * How many rows a caller's SELECT asks for when any rows that pass its filter are its answer, or
 * null: `SELECT <columns> FROM <one table> [WHERE <filter>] LIMIT <n>`, with column references
 * alone in its select list, no ORDER BY, DISTINCT, OFFSET, GROUP BY, HAVING, QUALIFY, sample,
 * join, CTE or subquery. Every row of such a SELECT comes from one event of its table, and the
 * rows of one part of the table's events are rows of the whole, so an engine may read part of
 * the events (the newest days first) and stop once it has `n` rows (docs/performance.md, "The
 * lists and the single log"). That is Studio's single log: `select id, timestamp, event_message,
 * metadata from edge_logs where id = '…' limit 1`. Read from DuckDB's parse tree of the text as
 * sent (the checked text), never from the text.
 *
 * @example
 * firstRowsOf({ json: await neutralSqlParser.serialize("select id from edge_logs where id = 'a' limit 1") }); // 1
 * firstRowsOf({ json: await neutralSqlParser.serialize('select count(*) from edge_logs limit 1') }); // null
 */
export function firstRowsOf(parsed: ParserOutput): number | null {
  const node = selectOf(parsed);
  if (!node) return null;
  const [modifier, ...more] = (node.modifiers ?? []) as Node[];
  if (modifier?.type !== 'LIMIT_MODIFIER' || more.length || present(modifier.offset)) return null;
  const limit = (modifier.limit as Node | null)?.class === 'CONSTANT' ? ((modifier.limit as Node).value as Node | undefined)?.value : undefined;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) return null;
  const select = node.select_list as Node[] | undefined;
  if (!select?.length || select.some((e) => e.class !== 'COLUMN_REF')) return null;
  return limit;
}

/**
 * How many of each table's newest rows a caller's SELECT reads when they are all it reads, or
 * null: every table it names is read as `SELECT * FROM <table> [AS a] ORDER BY [a.]timestamp DESC
 * NULLS LAST LIMIT <n>` (no WHERE, GROUP BY, HAVING, QUALIFY, sample, OFFSET, other ORDER BY key),
 * whatever the SELECTs around it do with those rows. That is what the BigQuery translation prints
 * for Studio's lists (print-duckdb.ts, `lateOutputs`: without WHERE, cut before its unnests). Its
 * answer then depends only on the `n` newest events of each table, so an engine may read a file's
 * head (each project's newest rows of the file) instead of the file (docs/performance.md, "The
 * lists read from the heads"). The largest `n` of its reads; read from DuckDB's parse tree of the
 * checked text, never from the text.
 *
 * @example
 * newestRowsOf({ json: await neutralSqlParser.serialize('SELECT * FROM (SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 100) AS e') }); // 100
 * newestRowsOf({ json: await neutralSqlParser.serialize("SELECT * FROM edge_logs WHERE id = 'a' ORDER BY timestamp DESC NULLS LAST LIMIT 100") }); // null
 */
export function newestRowsOf(parsed: ParserOutput): number | null {
  const root = statementNode(parsed);
  if (!root) return null;
  let tables = 0;
  const limits: number[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const node = value as Node;
    if (node.type === 'BASE_TABLE') tables++;
    if (node.type === 'SELECT_NODE' && (node.from_table as Node | undefined)?.type === 'BASE_TABLE') {
      const n = newestCut(node);
      if (n !== null) limits.push(n);
    }
    Object.values(node).forEach(visit);
  };
  visit(root);
  // Every table is read through such a cut (a table read another way, in a join, a subquery or a
  // CTE, is read whole): then only each table's newest rows count.
  return tables > 0 && limits.length === tables ? Math.max(...limits) : null;
}

/** `n` when a SELECT over one table is `SELECT * FROM t ORDER BY t.timestamp DESC NULLS LAST LIMIT n` and nothing else, else null. */
function newestCut(node: Node): number | null {
  const from = node.from_table as Node;
  if (present(from.sample) || present(from.at_clause) || present(node.where_clause) || present(node.having) || present(node.qualify) || present(node.sample)) return null;
  if (!isEmpty(node.group_expressions) || !isEmpty(node.group_sets) || node.aggregate_handling !== 'STANDARD_HANDLING' || !isEmpty((node.cte_map as Node | undefined)?.map)) return null;
  if (!selectsStar(node)) return null;
  const [order, limit, ...more] = (node.modifiers ?? []) as Node[];
  if (order?.type !== 'ORDER_MODIFIER' || limit?.type !== 'LIMIT_MODIFIER' || more.length || present(limit.offset)) return null;
  const [key, ...keys] = (order.orders ?? []) as Node[];
  if (!key || keys.length || key.type !== 'DESCENDING' || key.null_order !== 'NULLS LAST') return null;
  const expression = key.expression as Node | undefined;
  const names = expression?.class === 'COLUMN_REF' ? (expression.column_names as string[]) : [];
  const range = typeof from.alias === 'string' && from.alias !== '' ? from.alias : from.table_name;
  if (names.at(-1) !== 'timestamp' || names.length > 2 || (names.length === 2 && names[0] !== range)) return null;
  const n = (limit.limit as Node | null)?.class === 'CONSTANT' ? ((limit.limit as Node).value as Node | undefined)?.value : undefined;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : null;
}

/**
 * Whether a source-table template (`sourceTables.duckdb`, docs/sandboxing.md, "Source tables")
 * keeps events as they are: `SELECT * FROM source_rows [WHERE <filter>]`, a filter without
 * subqueries and nothing else (logs.all's). Only over such tables are a caller's first rows
 * rows of part of the events; a template that groups or limits makes rows of another kind.
 *
 * @example
 * rowsAreEvents({ json: await neutralSqlParser.serialize('SELECT * FROM source_rows WHERE project_column = $project') }); // true
 */
export function rowsAreEvents(parsed: ParserOutput): boolean {
  const node = selectOf(parsed);
  if (!node || (node.modifiers as unknown[] | undefined)?.length) return false;
  return selectsStar(node);
}

/** The one SELECT of a parse tree when it reads one table, filtered by a WHERE without subqueries, and groups, samples and names nothing; else null. */
function selectOf(parsed: ParserOutput): Node | null {
  const node = statementNode(parsed);
  if (node?.type !== 'SELECT_NODE' || !isEmpty((node.cte_map as Node | undefined)?.map)) return null;
  const from = node.from_table as Node | undefined;
  if (from?.type !== 'BASE_TABLE' || present(from.sample) || present(from.at_clause)) return null;
  if (!isEmpty(node.group_expressions) || !isEmpty(node.group_sets) || present(node.having) || present(node.qualify) || present(node.sample)) return null;
  if (node.aggregate_handling !== 'STANDARD_HANDLING') return null;
  // A subquery in the filter would read its table whole: the part read would change its answer.
  if (holdsSubquery(node.where_clause)) return null;
  return node;
}
