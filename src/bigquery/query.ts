import type { ExprContext } from './context';
import { translateExpr } from './expressions';
import { translateFrom } from './from-clause';
import type { Expr, OutputColumn, QueryIR, SelectIR } from './ir';
import { asKind, kindOf, outputKind, retypedColumn } from './kinds';
import type { Node } from './parse-bigquery';
import { refuse, shown } from './refuse';
import type { BigQuerySchema } from './schema';
import { Scope } from './scope';
import type { SourceText } from './string-literal';
import { absent, constructName, refuseIfPresent, variantOf } from './tree';

/** The translation of one caller's text: its source and the tables it may read. */
export interface QueryEnv {
  src: SourceText;
  schema: BigQuerySchema;
  ctes: ReadonlyArray<{ name: string; query: QueryIR }>;
}

type OrderItem = QueryIR['orderBy'][number];

/**
 * A query (WITH, a SELECT or set operation, ORDER BY, LIMIT) as the typed tree both engines print.
 *
 * @example
 * translateQuery(parsed, null, { src, schema, ctes: [] }).columns; // [{ name: 'id', kind: 'text' }, ...]
 */
export function translateQuery(node: Node, outer: Scope | null, env: QueryEnv): QueryIR {
  refuseIfPresent(node, ['fetch', 'locks', 'for_clause', 'settings', 'format_clause', 'pipe_operators'], (k) => `${k.replace('_clause', '').toUpperCase()} in a query`);
  const ctes = [...env.ctes];
  const own: QueryIR['ctes'] = [];
  if (!absent(node.with)) {
    const w = node.with as Node;
    if (w.recursive === true) refuse('construct', 'WITH RECURSIVE is not supported here.');
    for (const cte of w.cte_tables as Node[]) {
      const alias = cte.alias as Node;
      if (!absent(alias.columns) || !absent(cte.from) || !absent(cte.materialized)) refuse('construct', 'CTE column lists and MATERIALIZED are not supported here.');
      const name = String((alias.name as Node).value).toLowerCase();
      const query = translateQuery(cte.query as Node, outer, { ...env, ctes });
      own.push({ name, query });
      ctes.push({ name, query });
    }
  }
  const inner = { ...env, ctes };
  const [kind, value] = variantOf(node.body);
  const { limit, offset } = limitOf(node.limit_clause);
  if (kind === 'Select') {
    const { select, orderBy } = translateSelect(value as Node, node.order_by, outer, inner);
    return { ctes: own, body: select, orderBy, limit, offset, columns: select.items.map((i) => ({ name: i.name, kind: outputKind(kindOf(i.e)) })) };
  }
  if (kind === 'Query' && absent(node.order_by) && absent(node.limit_clause) && own.length === 0) return translateQuery(value as Node, outer, env);
  const body = setOperation(kind, value, outer, inner);
  const columns = body.t === 'setop' ? body.left.columns : [];
  return { ctes: own, body, orderBy: orderByOutputs(node.order_by, columns), limit, offset, columns };
}

function setOperation(kind: string, value: unknown, outer: Scope | null, env: QueryEnv): QueryIR['body'] {
  if (kind === 'Query') return refuse('construct', 'A parenthesized query is supported as a side of UNION, INTERSECT or EXCEPT only.');
  if (kind !== 'SetOperation') return refuse('construct', `${constructName(kind)} is not supported here.`);
  const v = value as Node;
  const op = String(v.op).toLowerCase();
  if (op !== 'union' && op !== 'intersect' && op !== 'except') refuse('construct', `${shown(String(v.op))} is not supported here.`);
  const quantifier = String(v.set_quantifier);
  if (quantifier !== 'All' && quantifier !== 'Distinct') refuse('construct', `${op.toUpperCase()} needs ALL or DISTINCT, as in BigQuery.`);
  if (op !== 'union' && quantifier === 'All') refuse('construct', `${op.toUpperCase()} ALL is not supported here.`);
  const side = (n: unknown) => {
    const [k, val] = variantOf(n);
    if (k === 'Select') return translateQuery({ with: null, body: n, order_by: null, limit_clause: null }, outer, env);
    if (k === 'Query') return translateQuery(val as Node, outer, env);
    return { ctes: [], body: setOperation(k, val, outer, env), orderBy: [], limit: null, offset: null, columns: [] } as QueryIR;
  };
  let left = fixColumns(side(v.left));
  let right = fixColumns(side(v.right));
  if (left.columns.length !== right.columns.length) refuse('query', `Queries in ${op.toUpperCase()} have different numbers of columns.`);
  // A bare NULL takes the other side's kind, as BigQuery coerces a NULL literal to any type.
  left.columns.forEach((c, i) => {
    const r = right.columns[i]!;
    if (c.kind === r.kind) return;
    if (isNullColumn(right, i)) right = retypedColumn(right, i, (e) => ({ t: 'cast', arg: e, to: c.kind, safe: false }), c.kind);
    else if (isNullColumn(left, i)) left = retypedColumn(left, i, (e) => ({ t: 'cast', arg: e, to: r.kind, safe: false }), r.kind);
  });
  left.columns.forEach((c, i) => {
    const r = right.columns[i]!;
    if (c.kind !== r.kind && !(c.kind === 'float' && r.kind === 'integer') && !(c.kind === 'integer' && r.kind === 'float'))
      refuse('query', `Column ${i + 1} of ${op.toUpperCase()} has kinds ${c.kind} and ${r.kind}.`);
  });
  return { t: 'setop', op: op as 'union', all: quantifier === 'All', left, right };
}

/** Whether a side's column is a bare NULL (of no kind yet). */
function isNullColumn(q: QueryIR, index: number): boolean {
  return q.body.t === 'select' && kindOf(q.body.items[index]!.e) === 'null';
}

function fixColumns(q: QueryIR): QueryIR {
  if (q.columns.length > 0 || q.body.t !== 'setop') return q;
  return { ...q, columns: q.body.left.columns };
}

function limitOf(clause: unknown): { limit: bigint | null; offset: bigint | null } {
  if (absent(clause)) return { limit: null, offset: null };
  const [kind, value] = variantOf(clause);
  if (kind !== 'LimitOffset') return refuse('construct', 'LIMIT must be LIMIT n [OFFSET m].');
  const v = value as Node;
  if (!absent(v.limit_by)) refuse('construct', 'LIMIT BY is not supported here.');
  const number = (e: unknown) => {
    const [k, val] = variantOf(e);
    const text = k === 'Value' ? JSON.stringify((val as Node).value) : '';
    const m = /^\{"Number":\["([0-9]{1,18})",false\]\}$/.exec(text);
    if (!m) refuse('construct', 'LIMIT and OFFSET take whole numbers.');
    return BigInt(m![1]!);
  };
  return { limit: absent(v.limit) ? null : number(v.limit), offset: absent(v.offset) ? null : number((v.offset as Node).value) };
}

/** ORDER BY of a set operation: output positions or names only. */
function orderByOutputs(orderBy: unknown, columns: OutputColumn[]): OrderItem[] {
  return orderItems(orderBy).map(({ expr, desc, nullsFirst }) => {
    const [kind, value] = variantOf(expr);
    let index = -1;
    if (kind === 'Identifier') index = columns.findIndex((c) => c.name.toLowerCase() === String((value as Node).value).toLowerCase());
    if (kind === 'Value') index = Number(/"Number":\["([0-9]+)"/.exec(JSON.stringify(value))?.[1] ?? 0) - 1;
    if (index < 0 || index >= columns.length) refuse('query', 'ORDER BY of a UNION names an output column or its position.');
    return { e: { t: 'pos', index: index + 1, kind: columns[index]!.kind }, desc, nullsFirst };
  });
}

function orderItems(orderBy: unknown): Array<{ expr: unknown; desc: boolean; nullsFirst: boolean | null }> {
  if (absent(orderBy)) return [];
  const o = orderBy as Node;
  if (!absent(o.interpolate)) refuse('construct', 'ORDER BY ... INTERPOLATE is not supported here.');
  const [kind, value] = variantOf(o.kind);
  if (kind !== 'Expressions') return refuse('construct', 'ORDER BY ALL is not supported here.');
  return (value as Node[]).map((item) => {
    if (!absent(item.with_fill)) refuse('construct', 'ORDER BY ... WITH FILL is not supported here.');
    const options = item.options as Node;
    return { expr: item.expr, desc: options.asc === false, nullsFirst: typeof options.nulls_first === 'boolean' ? options.nulls_first : null };
  });
}

const SELECT_EXTRAS = [
  'top',
  'exclude',
  'into',
  'lateral_views',
  'prewhere',
  'connect_by',
  'cluster_by',
  'distribute_by',
  'sort_by',
  'named_window',
  'qualify',
  'value_table_mode',
  'select_modifiers',
];

function translateSelect(v: Node, orderByNode: unknown, outer: Scope | null, env: QueryEnv): { select: SelectIR; orderBy: OrderItem[] } {
  refuseIfPresent(v, SELECT_EXTRAS, (k) => `${k.replace(/_/g, ' ').toUpperCase()} in a SELECT`);
  if (v.distinct !== null && v.distinct !== 'Distinct') refuse('construct', 'SELECT DISTINCT ON is not supported here.');
  const scope = new Scope(outer);
  const ctx: ExprContext = {
    src: env.src,
    scope,
    outputs: null,
    aggregates: false,
    query: (node, s) => translateQuery(node, s, env),
    translate: translateExpr,
  };
  const from = translateFrom((v.from as Node[]) ?? [], { schema: env.schema, ctes: env.ctes, expr: ctx, translateExpr }, scope);
  const where = absent(v.selection) ? null : asKind(translateExpr(v.selection, ctx), 'boolean', 'WHERE');
  const items = selectItems(v.projection as unknown[], { ...ctx, aggregates: true });
  const outputs = outputNames(items);
  const grouped: ExprContext = { ...ctx, outputs };
  const groupBy = groupByItems(v.group_by, items, grouped);
  const having = absent(v.having) ? null : asKind(translateExpr(v.having, { ...grouped, aggregates: true }), 'boolean', 'HAVING');
  const orderBy = orderItems(orderByNode).flatMap(({ expr, desc, nullsFirst }) => {
    const e = orderExpr(expr, items, outputs, { ...grouped, aggregates: true });
    // A JSON value sorts as a number when it is one, then as text (BigQuery's columns have one type).
    if (kindOf(e) !== 'json') return [{ e, desc, nullsFirst }];
    // Read from the value as selected or grouped (`json_value`), so a grouped query sorts by its groups.
    const value: Expr = { t: 'call', fn: 'json_value', args: [e], kind: 'json' };
    return [
      { e: asKind(value, 'float', 'ORDER BY'), desc, nullsFirst },
      { e: asKind(value, 'text', 'ORDER BY'), desc, nullsFirst },
    ];
  });
  return { select: { t: 'select', distinct: v.distinct === 'Distinct', items, from, where, groupBy, having }, orderBy };
}

function selectItems(projection: unknown[], ctx: ExprContext): SelectIR['items'] {
  const items: SelectIR['items'] = [];
  let anonymous = 0;
  for (const p of projection) {
    const [kind, value] = variantOf(p);
    const v = value as Node;
    if (kind === 'UnnamedExpr' || kind === 'ExprWithAlias') {
      const exprNode = kind === 'UnnamedExpr' ? value : v.expr;
      const e = translateExpr(exprNode, ctx);
      const name = kind === 'ExprWithAlias' ? String((v.alias as Node).value) : (impliedName(exprNode) ?? `f${anonymous++}_`);
      items.push({ e, name });
    } else if (kind === 'Wildcard' || kind === 'QualifiedWildcard') {
      items.push(...star(kind, value, ctx));
    } else {
      refuse('construct', `${constructName(kind)} in SELECT is not supported here.`);
    }
  }
  for (const item of items) outputKind(kindOf(item.e));
  return items;
}

/** The name BigQuery gives an unnamed column: a path's last part (`request.method` -> `method`). */
function impliedName(node: unknown): string | null {
  const [kind, value] = variantOf(node);
  if (kind === 'Identifier') return String((value as Node).value);
  if (kind === 'CompoundIdentifier') return String((value as Node[]).at(-1)!.value);
  return null;
}

function star(kind: string, value: unknown, ctx: ExprContext): SelectIR['items'] {
  const options = (kind === 'Wildcard' ? value : (value as unknown[])[1]) as Node;
  refuseIfPresent(options, ['opt_ilike', 'opt_exclude', 'opt_replace', 'opt_rename'], () => '* REPLACE / RENAME');
  const except = absent(options.opt_except)
    ? []
    : [(options.opt_except as Node).first_element, ...((options.opt_except as Node).additional_elements as unknown[])].map((i) => String((i as Node).value).toLowerCase());
  let ranges = ctx.scope.ranges;
  if (kind === 'QualifiedWildcard') {
    const [, nameNode] = variantOf((value as unknown[])[0]);
    const parts = (nameNode as Node[]).map((p) => String((variantOf(p)[1] as Node).value).toLowerCase());
    ranges = ranges.filter((r) => parts.length === 1 && r.name === parts[0]);
    if (ranges.length === 0) refuse('query', `${shown(parts.join('.'))}.* names no table of the FROM clause.`);
  } else if (ctx.scope.unnests.length > 0) {
    refuse('construct', 'SELECT * with UNNEST is not supported here: name the columns (r.path, r.method, ...).');
  }
  if (ranges.length === 0) refuse('query', 'SELECT * needs a FROM clause.');
  const items = ranges.flatMap((r) => [...r.columns].filter(([c]) => !except.includes(c)).map(([c, k]) => ({ e: { t: 'col' as const, rel: r.name, name: c, kind: k }, name: c })));
  if (items.length === 0) refuse('query', 'SELECT * EXCEPT leaves no column.');
  return items;
}

/** SELECT names a bare name in GROUP BY, HAVING and ORDER BY means first (BigQuery's rule); a name given twice is ambiguous there. */
function outputNames(items: SelectIR['items']): Map<string, { e: Expr; index: number }> {
  const out = new Map<string, { e: Expr; index: number }>();
  const twice = new Set<string>();
  items.forEach((item, i) => {
    const key = item.name.toLowerCase();
    if (out.has(key)) twice.add(key);
    else out.set(key, { e: item.e, index: i + 1 });
  });
  for (const key of twice) {
    const first = out.get(key)!;
    if (items.filter((i) => i.name.toLowerCase() === key).some((i) => JSON.stringify(i.e) !== JSON.stringify(first.e))) out.delete(key);
  }
  return out;
}

function groupByItems(groupBy: unknown, items: SelectIR['items'], ctx: ExprContext): Expr[] {
  const [kind, value] = variantOf(groupBy);
  if (kind !== 'Expressions') return refuse('construct', 'GROUP BY ALL is not supported here.');
  const [exprs, modifiers] = value as [unknown[], unknown[]];
  if (modifiers.length > 0) refuse('construct', 'GROUP BY ROLLUP, CUBE and GROUPING SETS are not supported here.');
  return exprs.map((e) => {
    const ordinal = ordinalOf(e, items.length, 'GROUP BY');
    const out = ordinal === null ? translateExpr(e, ctx) : items[ordinal - 1]!.e;
    if (containsAggregate(out)) refuse('query', 'GROUP BY cannot group by an aggregate.');
    return out;
  });
}

function orderExpr(node: unknown, items: SelectIR['items'], outputs: Map<string, { e: Expr; index: number }>, ctx: ExprContext): Expr {
  // A position where it is one; a JSON value by its expression (it sorts by number, then text).
  const at = (index: number, e: Expr): Expr => (kindOf(e) === 'json' ? e : { t: 'pos', index, kind: kindOf(e) });
  const ordinal = ordinalOf(node, items.length, 'ORDER BY');
  if (ordinal !== null) return at(ordinal, items[ordinal - 1]!.e);
  const [kind, value] = variantOf(node);
  if (kind === 'Identifier') {
    const output = outputs.get(String((value as Node).value).toLowerCase());
    if (output) return at(output.index, output.e);
  }
  return translateExpr(node, ctx);
}

/** A whole-number literal in GROUP BY / ORDER BY: a column's position. */
function ordinalOf(node: unknown, count: number, clause: string): number | null {
  const [kind, value] = variantOf(node);
  if (kind !== 'Value') return null;
  const m = /^\{"Number":\["([0-9]+)",false\]\}$/.exec(JSON.stringify((value as Node).value));
  if (!m) return null;
  const n = Number(m[1]);
  if (n < 1 || n > count) refuse('query', `${clause} position ${n} is not in the select list (1 to ${count}).`);
  return n;
}

function containsAggregate(e: Expr): boolean {
  if (e.t === 'agg') return true;
  const children: unknown[] = Object.values(e).flat();
  return children.some((c) => c !== null && typeof c === 'object' && 't' in (c as object) && typeof (c as { t: unknown }).t === 'string' && !('ctes' in (c as object)) && containsAggregate(c as Expr));
}
