import { CAST_TYPES } from './cast-types';
import { InvalidSqlError, type SandboxRule } from '../errors';
import { ALLOWED_COLLATIONS, ALLOWED_FUNCTIONS, ALLOWED_WINDOW_FUNCTIONS, SQL_VALUE_FUNCTION_NAMES } from './allowed-functions';

/**
 * The allowlist over DuckDB's parse tree of a SELECT (`json_serialize_sql`, DuckDB 1.5): every
 * node kind a caller may use is listed here with the exact keys DuckDB writes for it, and
 * anything else (a node kind, or a key this list does not know, which a newer DuckDB might add
 * and which could hold an expression) is refused. So the check does not depend on catching what
 * is dangerous: only what is known to be harmless passes.
 *
 * Table references must name a CTE in scope: the endpoint's (`tables`) or one the query itself
 * defines where DuckDB would see it (earlier in the same WITH, an enclosing query's WITH, or the
 * CTE itself inside the recursive part of a recursive CTE). DuckDB resolves a name to a CTE in
 * scope before any table, view or file, without regard to case, so a name found here can only
 * mean a CTE.
 *
 * @example
 * checkParseTree(JSON.parse(serialized).statements[0], ['edge_logs']); // throws InvalidSqlError
 */
export function checkParseTree(statement: unknown, tables: readonly string[]): void {
  new TreeCheck().statement(statement, new Set(tables.map((t) => t.toLowerCase())));
}

type Json = Record<string, unknown>;
type Scope = ReadonlySet<string>;

/** Keys every node of a kind carries (DuckDB's serialization of its base class). */
const QUERY_NODE_KEYS = ['type', 'modifiers', 'cte_map'];
const TABLE_REF_KEYS = ['type', 'alias', 'sample', 'query_location'];
const EXPRESSION_KEYS = ['class', 'type', 'alias', 'query_location'];

/** Keys of each query node type, besides the common ones. */
const QUERY_NODES: Record<string, string[]> = {
  SELECT_NODE: ['select_list', 'from_table', 'where_clause', 'group_expressions', 'group_sets', 'aggregate_handling', 'having', 'sample', 'qualify'],
  SET_OPERATION_NODE: ['setop_type', 'left', 'right', 'setop_all', 'children'],
  RECURSIVE_CTE_NODE: ['cte_name', 'union_all', 'left', 'right', 'aliases', 'key_targets'],
};

/** Keys of each table reference type, besides the common ones. */
const TABLE_REFS: Record<string, string[]> = {
  BASE_TABLE: ['schema_name', 'table_name', 'column_name_alias', 'catalog_name', 'at_clause'],
  JOIN: ['left', 'right', 'condition', 'join_type', 'ref_type', 'using_columns', 'delim_flipped', 'duplicate_eliminated_columns', 'is_implicit'],
  SUBQUERY: ['subquery', 'column_name_alias'],
  EMPTY: [],
  EMPTY_FROM: [],
  EXPRESSION_LIST: ['expected_names', 'expected_types', 'values'],
};

/** Keys of each expression class, besides the common ones. */
const EXPRESSIONS: Record<string, string[]> = {
  BETWEEN: ['input', 'lower', 'upper'],
  CASE: ['case_checks', 'else_expr'],
  CAST: ['child', 'cast_type', 'try_cast'],
  COLLATE: ['child', 'collation'],
  COLUMN_REF: ['column_names'],
  COMPARISON: ['left', 'right'],
  CONJUNCTION: ['children'],
  CONSTANT: ['value'],
  FUNCTION: ['function_name', 'schema', 'children', 'filter', 'order_bys', 'distinct', 'is_operator', 'export_state', 'catalog'],
  LAMBDA: ['lhs', 'expr', 'syntax_type'],
  OPERATOR: ['children'],
  POSITIONAL_REFERENCE: ['index'],
  STAR: ['relation_name', 'exclude_list', 'replace_list', 'columns', 'expr', 'unpacked', 'qualified_exclude_list', 'rename_list'],
  SUBQUERY: ['subquery_type', 'subquery', 'child', 'comparison_type'],
  WINDOW: [
    'function_name',
    'schema',
    'catalog',
    'children',
    'partitions',
    'orders',
    'start',
    'end',
    'start_expr',
    'end_expr',
    'offset_expr',
    'default_expr',
    'ignore_nulls',
    'filter_expr',
    'exclude_clause',
    'distinct',
    'arg_orders',
  ],
};

/** Operator expressions (`OPERATOR` class) by type: fixed operations that read nothing. */
const OPERATORS = new Set([
  'OPERATOR_NOT',
  'OPERATOR_IS_NULL',
  'OPERATOR_IS_NOT_NULL',
  'COMPARE_IN',
  'COMPARE_NOT_IN',
  'OPERATOR_COALESCE',
  'ARRAY_EXTRACT',
  'ARRAY_SLICE',
  'STRUCT_EXTRACT',
  'ARRAY_CONSTRUCTOR',
  'OPERATOR_TRY',
  'OPERATOR_UNPACK',
  'GROUPING_FUNCTION',
  'OPERATOR_NULLIF',
]);

/** A named (unbound) type is castable only if it is one of `NAMED_TYPES`; the others are `CAST_TYPES`. */
const NAMED_TYPES = new Set(['json']);
const TYPE_INFO_KEYS: Record<string, string[]> = {
  DECIMAL_TYPE_INFO: ['width', 'scale'],
  LIST_TYPE_INFO: ['child_type'],
  ARRAY_TYPE_INFO: ['child_type', 'size'],
  STRUCT_TYPE_INFO: ['child_types'],
  UNBOUND_TYPE_INFO: ['name', 'catalog', 'schema', 'user_type_modifiers'],
};

const NO_PARAMETERS = "Query parameters ($1, ?, $name) cannot be used: the endpoint binds its own (only $now, the request's clock, can be read).";

/** Whether a statement's parameters are `$now` alone. */
function onlyNow(map: unknown): boolean {
  return Array.isArray(map) && map.length === 1 && (map[0] as { key?: unknown } | null)?.key === 'now';
}

class TreeCheck {
  /** A SelectStatement: `{ node, named_param_map }`; parameters are refused where they appear. */
  statement(statement: unknown, scope: Scope, cteName?: string): void {
    const s = this.object(statement, ['node', 'named_param_map']);
    if (!isEmptyList(s.named_param_map) && !onlyNow(s.named_param_map)) refuse('parameter', NO_PARAMETERS);
    this.query(s.node, scope, cteName);
  }

  /** A query node; `cteName` when it is the body of that CTE (the one place a recursive node may be). */
  query(value: unknown, outer: Scope, cteName?: string): void {
    const node = this.object(value);
    const type = String(node.type);
    const keys = QUERY_NODES[type];
    if (!keys) refuse('construct', `${constructName(type)} queries are not allowed.`);
    if (type === 'RECURSIVE_CTE_NODE' && String(node.cte_name).toLowerCase() !== cteName) {
      refuse('construct', 'A recursive part is only allowed as the body of its own recursive CTE.');
    }
    this.keys(node, [...QUERY_NODE_KEYS, ...keys]);
    const scope = this.ctes(node.cte_map, outer);
    switch (type) {
      case 'SELECT_NODE':
        this.tableRef(node.from_table, scope);
        this.expressions(node.select_list, scope);
        this.expression(node.where_clause, scope);
        this.expressions(node.group_expressions, scope);
        this.expression(node.having, scope);
        this.expression(node.qualify, scope);
        this.sample(node.sample);
        break;
      case 'SET_OPERATION_NODE':
        this.query(node.left, scope);
        this.query(node.right, scope);
        for (const child of this.list(node.children)) this.query(child, scope);
        break;
      case 'RECURSIVE_CTE_NODE': {
        this.query(node.left, scope);
        // Only the recursive part sees the CTE itself.
        this.query(node.right, withNames(scope, [String(node.cte_name)]));
        this.expressions(node.key_targets, scope);
        break;
      }
    }
    for (const modifier of this.list(node.modifiers)) this.modifier(modifier, scope);
  }

  /** The CTEs of one WITH: each sees the enclosing scope and the CTEs before it; the query sees all. */
  ctes(value: unknown, outer: Scope): Scope {
    const map = this.object(value, ['map']);
    let scope = outer;
    for (const entry of this.list(map.map)) {
      const { key, value: info } = this.object(entry, ['key', 'value']);
      const cte = this.object(info, ['aliases', 'query', 'materialized', 'key_targets']);
      this.statement(cte.query, scope, String(key).toLowerCase());
      this.expressions(cte.key_targets, scope);
      scope = withNames(scope, [String(key)]);
    }
    return scope;
  }

  tableRef(value: unknown, scope: Scope): void {
    const ref = this.object(value);
    const type = String(ref.type);
    if (type === 'TABLE_FUNCTION') {
      refuse('table_function', "Table functions (read_csv, glob, range, ...) cannot be used: select from the endpoint's CTEs.");
    }
    const keys = TABLE_REFS[type];
    if (!keys) refuse('construct', `${constructName(type)} is not allowed in FROM.`);
    this.keys(ref, [...TABLE_REF_KEYS, ...keys]);
    this.sample(ref.sample);
    switch (type) {
      case 'BASE_TABLE': {
        const name = String(ref.table_name).toLowerCase();
        if (ref.schema_name !== '' || ref.catalog_name !== '' || ref.at_clause !== null || !scope.has(name)) {
          refuse('table', `Only the endpoint's CTEs (${[...scope].filter((t) => /^[a-z_][a-z0-9_]*$/.test(t)).join(', ')}) and the query's own CTEs can be read, by their bare names.`);
        }
        break;
      }
      case 'JOIN':
        this.tableRef(ref.left, scope);
        this.tableRef(ref.right, scope);
        this.expression(ref.condition, scope);
        this.expressions(ref.duplicate_eliminated_columns, scope);
        break;
      case 'SUBQUERY':
        this.statement(ref.subquery, scope);
        break;
      case 'EXPRESSION_LIST':
        for (const row of this.list(ref.values)) this.expressions(row, scope);
        for (const t of this.list(ref.expected_types)) this.type(t);
        break;
    }
  }

  expression(value: unknown, scope: Scope): void {
    if (value === null || value === undefined) return;
    const e = this.object(value);
    const cls = String(e.class);
    if (cls === 'PARAMETER') {
      // `$now`, the request's clock (what the BigQuery translation reads CURRENT_TIMESTAMP() from): bound for every statement.
      if (e.type !== 'VALUE_PARAMETER' || e.identifier !== 'now') refuse('parameter', NO_PARAMETERS);
      this.keys(e, [...EXPRESSION_KEYS, 'identifier']);
      return;
    }
    const keys = EXPRESSIONS[cls];
    if (!keys) refuse('construct', `${constructName(cls)} expressions are not allowed.`);
    this.keys(e, [...EXPRESSION_KEYS, ...keys]);
    switch (cls) {
      case 'BETWEEN':
        this.expressions([e.input, e.lower, e.upper], scope);
        break;
      case 'CASE':
        for (const check of this.list(e.case_checks)) {
          const c = this.object(check, ['when_expr', 'then_expr']);
          this.expressions([c.when_expr, c.then_expr], scope);
        }
        this.expression(e.else_expr, scope);
        break;
      case 'CAST':
        this.expression(e.child, scope);
        this.type(e.cast_type);
        break;
      case 'COLLATE':
        this.expression(e.child, scope);
        if (
          !String(e.collation)
            .toLowerCase()
            .split('.')
            .every((c) => ALLOWED_COLLATIONS.has(c))
        ) {
          refuse('function', `Only the collations ${[...ALLOWED_COLLATIONS].join(', ')} can be used.`);
        }
        break;
      case 'COLUMN_REF':
        for (const part of this.list(e.column_names)) {
          const name = String(part).toLowerCase();
          if (SQL_VALUE_FUNCTION_NAMES.has(name)) refuse('function', `${name} reads the session or the clock and cannot be used (not even as a column name).`);
        }
        break;
      case 'COMPARISON':
        this.expressions([e.left, e.right], scope);
        break;
      case 'CONJUNCTION':
      case 'OPERATOR':
        if (cls === 'OPERATOR' && !OPERATORS.has(String(e.type))) refuse('construct', `The operator ${constructName(String(e.type))} is not allowed.`);
        this.expressions(e.children, scope);
        break;
      case 'CONSTANT':
      case 'POSITIONAL_REFERENCE':
        break;
      case 'FUNCTION':
        this.functionName(e, ALLOWED_FUNCTIONS);
        if (e.export_state !== false) refuse('construct', 'EXPORT_STATE cannot be used.');
        this.expressions(e.children, scope);
        this.expression(e.filter, scope);
        this.modifier(e.order_bys, scope);
        break;
      case 'LAMBDA':
        this.expressions([e.lhs, e.expr], scope);
        break;
      case 'STAR':
        this.expression(e.expr, scope);
        for (const entry of this.list(e.replace_list)) {
          const r = this.object(entry, ['key', 'value']);
          this.expression(r.value, scope);
        }
        break;
      case 'SUBQUERY':
        this.statement(e.subquery, scope);
        this.expression(e.child, scope);
        break;
      case 'WINDOW':
        this.functionName(e, ALLOWED_WINDOW_FUNCTIONS);
        this.expressions(e.children, scope);
        this.expressions(e.partitions, scope);
        this.orders(e.orders, scope);
        this.orders(e.arg_orders, scope);
        this.expressions([e.start_expr, e.end_expr, e.offset_expr, e.default_expr, e.filter_expr], scope);
        break;
    }
  }

  /** A function or window call: a bare (or `main.`) name on the allowlist. */
  functionName(e: Json, allowed: ReadonlySet<string>): void {
    const name = String(e.function_name).toLowerCase();
    // The parser itself writes `main.` for the functions behind [..], {..} and MAP {..}.
    const qualified = !(e.catalog === '' && (e.schema === '' || e.schema === 'main'));
    if (qualified || !allowed.has(name)) {
      const shown = /^[a-z_][a-z0-9_]*$/.test(name) && !qualified ? `${name} is` : 'This function is';
      refuse('function', `${shown} not allowed in a caller's SQL; the allowed functions are listed in the docs (sandboxing).`);
    }
  }

  modifier(value: unknown, scope: Scope): void {
    const m = this.object(value);
    switch (m.type) {
      case 'ORDER_MODIFIER':
        this.keys(m, ['type', 'orders']);
        this.orders(m.orders, scope);
        return;
      case 'LIMIT_MODIFIER':
      case 'LIMIT_PERCENT_MODIFIER':
        this.keys(m, ['type', 'limit', 'offset']);
        this.expressions([m.limit, m.offset], scope);
        return;
      case 'DISTINCT_MODIFIER':
        this.keys(m, ['type', 'distinct_on_targets']);
        this.expressions(m.distinct_on_targets, scope);
        return;
      default:
        refuse('construct', `${constructName(String(m.type))} is not allowed.`);
    }
  }

  orders(value: unknown, scope: Scope): void {
    for (const order of this.list(value)) {
      const o = this.object(order, ['type', 'null_order', 'expression']);
      this.expression(o.expression, scope);
    }
  }

  sample(value: unknown): void {
    if (value === null || value === undefined) return;
    this.object(value, ['sample_size', 'is_percentage', 'method', 'seed']);
  }

  /** A cast target: built-in types (nested ones checked whole) and JSON; never a type of the catalog. */
  type(value: unknown): void {
    const t = this.object(value, ['id', 'type_info']);
    if (!Object.hasOwn(CAST_TYPES, String(t.id))) refuse('type', 'This type cannot be used in a cast.');
    if (t.type_info === null) {
      if (t.id === 'UNBOUND') refuse('type', 'This type cannot be used in a cast.');
      return;
    }
    const info = this.object(t.type_info);
    const keys = TYPE_INFO_KEYS[String(info.type)];
    if (!keys) refuse('type', 'This type cannot be used in a cast.');
    this.keys(info, ['type', 'alias', 'extension_info', ...keys]);
    if (info.extension_info !== null && info.extension_info !== undefined) refuse('type', 'This type cannot be used in a cast.');
    if (info.type === 'UNBOUND_TYPE_INFO') {
      if (info.catalog !== '' || info.schema !== '' || !isEmptyList(info.user_type_modifiers) || !NAMED_TYPES.has(String(info.name).toLowerCase())) {
        refuse('type', 'This type cannot be used in a cast; the named types allowed are: json.');
      }
    }
    if (info.child_type !== undefined) this.type(info.child_type);
    for (const child of this.list(info.child_types ?? [])) this.type(this.object(child, ['first', 'second']).second);
  }

  expressions(value: unknown, scope: Scope): void {
    for (const e of this.list(value)) this.expression(e, scope);
  }

  /** An object with only `allowed` keys (when given). */
  object(value: unknown, allowed?: readonly string[]): Json {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) refuse('construct', 'The query has a part the sandbox does not know.');
    if (allowed) this.keys(value as Json, allowed);
    return value as Json;
  }

  keys(value: Json, allowed: readonly string[]): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) refuse('construct', 'The query has a part the sandbox does not know.');
    }
  }

  list(value: unknown): unknown[] {
    if (value === null || value === undefined) return [];
    if (!Array.isArray(value)) refuse('construct', 'The query has a part the sandbox does not know.');
    return value;
  }
}

function withNames(scope: Scope, names: readonly string[]): Scope {
  return new Set([...scope, ...names.map((n) => n.toLowerCase())]);
}

function isEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

function refuse(rule: SandboxRule, message: string): never {
  throw new InvalidSqlError(rule, message);
}

/** A node kind as DuckDB names it (upper case and underscores), or nothing when it is not one. */
function constructName(kind: string): string {
  return /^[A-Z_]{1,40}$/.test(kind) ? kind.replaceAll('_', ' ') : 'This construct';
}
