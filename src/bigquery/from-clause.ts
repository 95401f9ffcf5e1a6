import type { ExprContext } from './context';
import type { FromIR, Kind, QueryIR, UnnestAlias } from './ir';
import { RESERVED_PREFIX } from './ir';
import { asKind } from './kinds';
import type { Node } from './parse-bigquery';
import { refuse, shown } from './refuse';
import type { BigQuerySchema } from './schema';
import type { Range, Scope } from './scope';
import { absent, constructName, variantOf } from './tree';

/** What FROM needs besides the scope it fills: the tables, the CTEs in sight, subqueries. */
export interface FromEnv {
  schema: BigQuerySchema;
  /** The query's own CTEs in sight, innermost last. */
  ctes: ReadonlyArray<{ name: string; query: QueryIR }>;
  expr: ExprContext;
  translateExpr(node: unknown, ctx: ExprContext): import('./ir').Expr;
}

/**
 * A FROM clause: its tables, CTEs and subqueries become ranges of `scope`, its joins a tree, and
 * each `UNNEST(x) AS a` an alias over the range whose JSON column `x` reads (kept rows: a missing
 * or empty value unnests to one row of NULLs, an object to one row, an array to one per element).
 *
 * @example
 * translateFrom(select.from, env, scope); // { t: 'table', name: 'edge_logs', alias: 'edge_logs', unnests: [...], cte: false }
 */
export function translateFrom(from: Node[], env: FromEnv, scope: Scope): FromIR | null {
  let tree: FromIR | null = null;
  for (const item of from) {
    tree = join(tree, relation(item.relation as Node, env, scope), 'cross', null);
    for (const j of (item.joins as Node[]) ?? []) {
      if (j.global === true) refuse('construct', 'GLOBAL joins are not supported here.');
      const [operator, constraint] = variantOf(j.join_operator);
      const [relKind] = variantOf(j.relation);
      if (relKind === 'UNNEST') {
        unnestJoin(operator, constraint);
        relation(j.relation as Node, env, scope);
        continue;
      }
      const right = relation(j.relation as Node, env, scope);
      tree = join(tree, right, ...joinKind(operator, constraint, env, scope));
    }
  }
  return tree;
}

function join(left: FromIR | null, right: FromIR | null, kind: 'inner' | 'left' | 'right' | 'full' | 'cross', on: import('./ir').Expr | null): FromIR | null {
  if (!right) return left;
  if (!left) return right;
  return { t: 'join', kind, left, right, on };
}

const JOIN_KINDS: Record<string, 'inner' | 'left' | 'right' | 'full'> = {
  Join: 'inner',
  Inner: 'inner',
  Left: 'left',
  LeftOuter: 'left',
  Right: 'right',
  RightOuter: 'right',
  FullOuter: 'full',
};

function joinKind(operator: string, constraint: unknown, env: FromEnv, scope: Scope): ['inner' | 'left' | 'right' | 'full' | 'cross', import('./ir').Expr | null] {
  if (operator === 'CrossJoin') {
    if (!absent(constraint) && variantOf(constraint)[0] !== 'None') refuse('construct', 'CROSS JOIN takes no condition.');
    return ['cross', null];
  }
  const kind = JOIN_KINDS[operator];
  if (!kind) return refuse('construct', `${constructName(operator)} joins are not supported here.`);
  const [how, condition] = variantOf(constraint);
  if (how !== 'On') return refuse('construct', `JOIN ... ${how === 'Using' ? 'USING' : how.toUpperCase()} is not supported here: write JOIN ... ON.`);
  const on = asKind(env.translateExpr(condition, { ...env.expr, scope, aggregates: false, outputs: null }), 'boolean', 'ON');
  return [kind, on];
}

/** Joins of an UNNEST: CROSS JOIN, a comma, or [LEFT|INNER] JOIN ... ON TRUE (rows are kept either way). */
function unnestJoin(operator: string, constraint: unknown): void {
  if (operator === 'CrossJoin') return;
  if (operator in JOIN_KINDS && operator !== 'Right' && operator !== 'RightOuter' && operator !== 'FullOuter') {
    const [how, condition] = variantOf(constraint);
    if (how === 'On') {
      const [kind, value] = variantOf(condition);
      if (kind === 'Value' && JSON.stringify((value as Node).value) === '{"Boolean":true}') return;
    }
  }
  refuse('construct', 'An UNNEST joins by CROSS JOIN, a comma or LEFT JOIN ... ON TRUE here (no other join condition).');
}

function relation(node: Node, env: FromEnv, scope: Scope): FromIR | null {
  const [kind, value] = variantOf(node);
  const v = value as Node;
  switch (kind) {
    case 'Table':
      return table(v, env, scope);
    case 'Derived': {
      if (v.lateral === true) refuse('construct', 'LATERAL subqueries are not supported here.');
      const query = env.expr.query(v.subquery as Node, scope.parent);
      const alias = aliasName(v.alias) ?? `__subquery${scope.ranges.length + 1}`;
      scope.addRange(
        rangeOf(
          alias,
          query.columns.map((c) => [c.name.toLowerCase(), c.kind]),
          {},
        ),
      );
      return { t: 'subquery', query, alias, unnests: scope.ranges.at(-1)!.unnests };
    }
    case 'UNNEST':
      unnest(v, env, scope);
      return null;
    case 'TableFunction':
    case 'Function':
      return refuse('table_function', "Table functions cannot be used: select from the endpoint's tables.");
    default:
      return refuse('construct', `${constructName(kind)} is not supported in FROM.`);
  }
}

function table(v: Node, env: FromEnv, scope: Scope): FromIR {
  if (!absent(v.args)) refuse('table_function', "Table functions (read_csv, glob, ...) cannot be used: select from the endpoint's tables.");
  for (const key of ['with_hints', 'version', 'partitions', 'json_path', 'sample', 'index_hints', 'with_ordinality']) {
    if (!absent(v[key])) refuse('construct', 'Table hints, versions, samples and partitions are not supported here.');
  }
  const parts = (v.name as Node[]).map((p) => String((variantOf(p)[1] as Node).value));
  const tables = Object.keys(env.schema.tables);
  if (parts.length !== 1) refuse('table', `Only these tables can be read, by their bare names: ${tables.join(', ')}.`);
  const name = parts[0]!.toLowerCase();
  const cte = [...env.ctes].reverse().find((c) => c.name === name);
  const alias = aliasName(v.alias) ?? name;
  if (cte) {
    scope.addRange(
      rangeOf(
        alias,
        cte.query.columns.map((c) => [c.name.toLowerCase(), c.kind]),
        {},
      ),
    );
  } else {
    const t = env.schema.tables[name];
    if (!t || !Object.hasOwn(env.schema.tables, name)) return refuse('table', `Table ${shown(parts[0]!)} is not there: the tables are ${tables.join(', ')}.`);
    scope.addRange({ ...rangeOf(alias, Object.entries(t.columns), t.fields ?? {}), ...(t.typed ? { typed: t.typed } : {}) });
    return { t: 'table', name, alias, unnests: scope.ranges.at(-1)!.unnests, cte: false, ...(t.typed ? { typed: t.typed } : {}) };
  }
  return { t: 'table', name, alias, unnests: scope.ranges.at(-1)!.unnests, cte: cte !== undefined };
}

function rangeOf(alias: string, columns: Array<[string, Kind]>, fields: Readonly<Record<string, readonly string[]>>): Range {
  if (columns.some(([c]) => c.startsWith(RESERVED_PREFIX))) refuse('query', `A column name may not start with ${RESERVED_PREFIX}.`);
  return { name: alias, columns: new Map(columns), fields, unnests: [] };
}

function aliasName(alias: unknown): string | null {
  if (absent(alias)) return null;
  const a = alias as Node;
  if (!absent(a.columns)) refuse('construct', 'Column aliases after a table alias are not supported here.');
  return String((a.name as Node).value).toLowerCase();
}

/** `UNNEST(x) AS a`: x must be a JSON column of a range or a field of an unnest alias. */
function unnest(v: Node, env: FromEnv, scope: Scope): void {
  if (v.with_offset === true || v.with_ordinality === true) refuse('construct', 'UNNEST ... WITH OFFSET is not supported here.');
  // Without an alias its fields are named bare, as BigQuery's unaliased UNNEST of records (under a reserved name).
  const name = aliasName(v.alias) ?? `${RESERVED_PREFIX}unnest${scope.unnests.length + 1}`;
  const exprs = v.array_exprs as unknown[];
  const [kind, value] = exprs.length === 1 ? variantOf(exprs[0]) : ['', null];
  if (kind !== 'Identifier' && kind !== 'CompoundIdentifier') {
    return refuse('construct', 'UNNEST of this expression is not supported here: unnest a JSON column or field (UNNEST(metadata) AS m, UNNEST(m.request) AS r).');
  }
  const parts = (kind === 'Identifier' ? [value as Node] : (value as Node[])).map((p) => String(p.value));
  const target = scope.resolve(parts);
  let alias: UnnestAlias;
  if (target.t === 'col' && target.kind === 'json') alias = { slot: '', column: target.name, path: [], parent: null };
  else if (target.t === 'field') alias = { slot: '', column: target.column, path: [...(target.unnest?.path ?? []), ...target.path], parent: target.unnest };
  else return refuse('construct', 'UNNEST reads a JSON column or field here (metadata, m.request); this value is not one.');
  const range = scope.ranges.find((r) => r.name === (target as { rel: string }).rel && (target.t !== 'field' || !target.unnest || r.unnests.includes(target.unnest)));
  if (!range) return refuse('construct', 'UNNEST of a value of an enclosing query is not supported here.');
  alias.slot = `a${range.unnests.length + 1}`;
  range.unnests.push(alias);
  scope.addUnnest({ name, range, alias });
}
