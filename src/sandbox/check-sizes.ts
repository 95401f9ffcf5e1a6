import { CAST_TYPES } from './cast-types';
import { sizeRuleOf } from './allowed-functions';
import { collects, copies, frameRows, sizeOf } from './function-size';
import { FIXED_VALUE, refuseTooLarge as refuse, SIZE_LIMITS } from './size-limits';
import { constant, EVENT_VALUE, maxOf, POOL_VALUE, scale, substitute, sum, symbol, symbolic, times, without, type Bound } from './size-bound';
import { columnOf, EVENT_RELATION, opaque, renamed, selectRelation, widest, type Relation, type SelectItem } from './size-relations';

/**
 * Refuses (`InvalidSqlError`, rule `too_large`) a caller's SELECT whose values can grow past
 * `SIZE_LIMITS`, from its parse tree (already checked by `checkParseTree`): the size arguments of
 * `range`, `repeat`, `lpad`, ... must be constants, and what every function can build is bounded
 * by the rules of `allowed-functions.ts`, through subqueries, CTEs (recursive ones too) and lambdas.
 *
 * @example
 * checkSizes(statement, ['edge_logs']); // throws for select range(1000000000)
 */
export function checkSizes(statement: unknown, tables: readonly string[]): void {
  const scope: Scope = {
    tables: new Map(tables.map((t) => [t.toLowerCase(), EVENT_RELATION])),
    view: [],
    aliases: new Map(),
    relations: [],
    from: constant(0),
    named: new Map(),
    params: new Map(),
  };
  const answer = new SizeCheck().statement(statement as Json, scope).row;
  if (answer.c > SIZE_LIMITS.answerRowBytes || (answer.k.data ?? 0) > SIZE_LIMITS.answerDataFactor) {
    refuse(`A row of its answer can take more than ${SIZE_LIMITS.answerRowBytes} bytes, or ${SIZE_LIMITS.answerDataFactor} times an event's size.`);
  }
}

type Json = Record<string, any>;

interface Scope {
  /** CTEs in scope by name. */
  tables: ReadonlyMap<string, Relation>;
  /** The relations a column name may be read from: this FROM's and the enclosing queries'. */
  view: readonly Relation[];
  /** This FROM's relations by alias. */
  aliases: ReadonlyMap<string, Relation>;
  /** This FROM's relations, for `*`. */
  relations: readonly Relation[];
  /** This FROM's whole row (`*`). */
  from: Bound;
  /** The select list's names in sight (DuckDB lets a select item, WHERE, GROUP BY, ORDER BY ... read an earlier item by its alias). */
  named: ReadonlyMap<string, Bound>;
  /** Lambda parameters in scope. */
  params: ReadonlyMap<string, Bound>;
}

const FIXED_SIZE_TYPES = new Set(Object.keys(CAST_TYPES).filter((type) => CAST_TYPES[type] === 'fixed'));

class SizeCheck {
  private constants = 0;
  private perRow: Bound = constant(0, true);
  private symbols = 0;
  /** What each symbol stands for, for the totals. */
  private readonly env = new Map<string, Bound>();

  statement(value: Json, scope: Scope): Relation {
    return this.query(value.node, scope);
  }

  query(node: Json, outer: Scope): Relation {
    const scope = this.ctes(node.cte_map, outer);
    let relation: Relation;
    // ORDER BY, LIMIT and DISTINCT ON read the select's relations and names; a set operation's, its result.
    let modifiers: Scope;
    switch (node.type) {
      case 'SELECT_NODE':
        [relation, modifiers] = this.select(node, scope);
        break;
      case 'SET_OPERATION_NODE': {
        const parts = [node.left, node.right, ...(node.children ?? [])].filter(Boolean).map((q: Json) => this.query(q, scope));
        relation = opaque(maxOf(parts.map((p) => p.row)), maxOf(parts.map(widest)));
        modifiers = { ...scope, view: [relation, ...scope.view] };
        break;
      }
      default:
        // A recursive part outside its CTE was refused by checkParseTree; its CTE handles it.
        relation = opaque(this.recursive(node, scope));
        modifiers = scope;
    }
    for (const modifier of node.modifiers ?? []) this.modifier(modifier, modifiers);
    return relation;
  }

  private ctes(map: Json | undefined, outer: Scope): Scope {
    let scope = outer;
    for (const { key, value } of map?.map ?? []) {
      const relation = renamed(this.statement(value.query, scope), value.aliases);
      scope = { ...scope, tables: new Map([...scope.tables, [String(key).toLowerCase(), relation]]) };
    }
    return scope;
  }

  /**
   * A recursive CTE's row: its recursive part is looked at with the CTE's own row as a symbol.
   * A row that takes itself more than once (`s || s`) doubles at each step: refused. One that
   * adds to itself grows by steps, each kept in DuckDB's counted memory: bounded by the limit.
   */
  private recursive(node: Json, scope: Scope): Bound {
    const first = this.query(node.left, scope).row;
    const self = `r${++this.symbols}`;
    this.env.set(self, maxOf([first, POOL_VALUE]));
    const tables = new Map([...scope.tables, [String(node.cte_name).toLowerCase(), opaque(symbol(self, true))]]);
    const step = this.query(node.right, { ...scope, tables }).row;
    for (const target of node.key_targets ?? []) this.expression(target, scope);
    if ((step.k[self] ?? 0) > 1) {
      refuse('The recursive CTE takes its own row more than once at each step, so its values double at every step.');
    }
    const rest = without(step, [self]);
    const grows = (step.k[self] ?? 0) > 0 && (rest.c > 0 || symbolic(rest));
    return maxOf([first, rest, ...(grows ? [POOL_VALUE] : [])]);
  }

  /** A SELECT's relation, and the scope its ORDER BY sees (its FROM and every name of its select list). */
  private select(node: Json, scope: Scope): [Relation, Scope] {
    const from = this.tableRef(node.from_table, scope);
    let inner: Scope = { ...scope, view: [...from.relations, ...scope.view], aliases: from.aliases, relations: from.relations, from: from.row };
    const items: SelectItem[] = [];
    for (const e of node.select_list ?? []) {
      const item = e.class === 'STAR' ? this.star(e, inner) : [{ name: e.alias || null, value: this.expression(e, inner) }];
      items.push(...item);
      // Each later item may read this one by its alias.
      for (const { name, value } of item) if (name) inner = { ...inner, named: new Map([...inner.named, [name.toLowerCase(), maxOf([value, inner.named.get(name.toLowerCase()) ?? constant(0)])]]) };
    }
    for (const e of [node.where_clause, node.having, node.qualify, ...(node.group_expressions ?? [])]) this.expression(e, inner);
    return [selectRelation(items), inner];
  }

  /** A `*` of a select list: a plain one passes on its relations' columns, anything else (COLUMNS, RENAME, a struct's fields) is one unnamed item. */
  private star(e: Json, scope: Scope): SelectItem[] {
    const plain = !e.columns && !e.expr && !e.unpacked && !(e.rename_list ?? []).length;
    const relations = e.relation_name ? [scope.aliases.get(String(e.relation_name).toLowerCase())] : scope.relations;
    if (!plain || relations.some((r) => r === undefined)) return [{ name: null, value: this.expression(e, scope) }];
    // REPLACE computes its expressions for each row, each the new value of its column.
    const replaced = (e.replace_list ?? []).map((r: Json): SelectItem => ({ name: String(r.key), value: this.expression(r.value, scope) }));
    return [...relations.map((r): SelectItem => ({ name: null, value: r!.row, star: r! })), ...replaced];
  }

  private tableRef(ref: Json, scope: Scope): { row: Bound; relations: Relation[]; aliases: Map<string, Relation> } {
    const named = (relation: Relation, name: string) => ({ row: relation.row, relations: [relation], aliases: new Map(name ? [[name.toLowerCase(), relation]] : []) });
    switch (ref.type) {
      case 'BASE_TABLE': {
        const relation = scope.tables.get(String(ref.table_name).toLowerCase()) ?? EVENT_RELATION;
        return named(renamed(relation, ref.column_name_alias), ref.alias || ref.table_name);
      }
      case 'SUBQUERY':
        return named(renamed(this.statement(ref.subquery, scope), ref.column_name_alias), ref.alias);
      case 'JOIN': {
        const left = this.tableRef(ref.left, scope);
        const right = this.tableRef(ref.right, scope);
        const relations = [...left.relations, ...right.relations];
        const aliases = new Map([...left.aliases, ...right.aliases]);
        const row = sum([left.row, right.row]);
        this.expression(ref.condition, { ...scope, view: [...relations, ...scope.view], aliases, relations, from: row });
        return { row, relations, aliases };
      }
      case 'EXPRESSION_LIST': {
        const rows = (ref.values ?? []).map((values: Json[]) => sum(values.map((e) => this.expression(e, scope))));
        return named(opaque(maxOf(rows)), ref.alias);
      }
      default:
        return named(opaque(constant(0)), '');
    }
  }

  private modifier(m: Json, scope: Scope): void {
    for (const o of m.orders ?? []) this.expression(o.expression, scope);
    for (const e of [m.limit, m.offset, ...(m.distinct_on_targets ?? [])]) this.expression(e, scope);
  }

  expression(e: Json | null | undefined, scope: Scope): Bound {
    if (e === null || e === undefined) return constant(0);
    switch (e.class) {
      case 'CONSTANT':
        return constant(typeof e.value?.value === 'string' ? e.value.value.length : FIXED_VALUE);
      case 'COLUMN_REF':
        return this.column(
          e.column_names.map((n: unknown) => String(n).toLowerCase()),
          scope,
        );
      // `$now`, a timestamp.
      case 'PARAMETER':
        return constant(FIXED_VALUE);
      case 'POSITIONAL_REFERENCE':
        return this.anyColumn(scope);
      case 'STAR': {
        // COLUMNS(...) and REPLACE compute their expressions for each row too.
        const computed = [e.expr, ...(e.replace_list ?? []).map((r: Json) => r.value)].map((x) => this.expression(x, scope));
        const relation = e.relation_name ? scope.aliases.get(String(e.relation_name).toLowerCase()) : undefined;
        return sum([relation?.row ?? scope.from, ...computed]);
      }
      case 'FUNCTION':
        return this.account(this.call(e, scope));
      case 'WINDOW':
        return this.account(this.window(e, scope));
      case 'CAST': {
        const child = this.expression(e.child, scope);
        // A number, a time, a boolean or a UUID has a fixed size whatever it is read from; text (of a list, a struct) up to 8 times.
        return this.account(FIXED_SIZE_TYPES.has(String(e.cast_type?.id)) ? constant(FIXED_VALUE, child.row) : scale(child, 8, 64));
      }
      case 'COLLATE':
        return this.expression(e.child, scope);
      case 'CASE': {
        const thens = (e.case_checks ?? []).map((c: Json) => (this.expression(c.when_expr, scope), this.expression(c.then_expr, scope)));
        return this.account(maxOf([...thens, this.expression(e.else_expr, scope)]));
      }
      case 'OPERATOR':
        return this.account(this.operator(e, scope));
      case 'SUBQUERY': {
        const row = this.statement(e.subquery, { ...scope, from: constant(0), aliases: new Map(), relations: [] }).row;
        const compared = this.expression(e.child, scope);
        return e.subquery_type === 'SCALAR' ? { ...row, row: true } : constant(FIXED_VALUE, row.row || compared.row);
      }
      default: {
        // COMPARISON, CONJUNCTION, BETWEEN: a boolean of whatever they compare.
        const parts = [e.left, e.right, e.input, e.lower, e.upper, ...(e.children ?? [])].map((c) => this.expression(c, scope));
        return constant(
          1,
          parts.some((p) => p.row),
        );
      }
    }
  }

  /**
   * A column reference: `t.c` with `c` a named column of this FROM's `t` is that column; a bare name
   * is that column of any relation in view or an alias of the select list (whichever DuckDB binds
   * it to); anything else (a struct's field, an enclosing query's alias) at most the largest column in view.
   */
  private column(names: string[], scope: Scope): Bound {
    const [first, second] = names as [string, string | undefined];
    const param = names.length === 1 ? scope.params.get(first) : undefined;
    if (param) return param;
    if (second !== undefined) {
      const column = scope.aliases.get(first)?.columns.get(second);
      return column ?? this.anyColumn(scope);
    }
    const named = scope.named.get(first);
    const candidates = [...scope.view.map((r) => columnOf(r, first)), ...(named ? [named] : [])];
    return candidates.length ? maxOf(candidates) : EVENT_VALUE;
  }

  /** The largest column a name can read here. */
  private anyColumn(scope: Scope): Bound {
    const candidates = [...scope.view.map(widest), ...scope.named.values()];
    return candidates.length ? maxOf(candidates) : EVENT_VALUE;
  }

  private operator(e: Json, scope: Scope): Bound {
    const parts: Bound[] = (e.children ?? []).map((c: Json) => this.expression(c, scope));
    switch (e.type) {
      case 'OPERATOR_COALESCE':
        return maxOf(parts);
      case 'ARRAY_CONSTRUCTOR':
        return { ...sum(parts, FIXED_VALUE * parts.length), items: parts.length };
      case 'ARRAY_EXTRACT':
      case 'ARRAY_SLICE':
      case 'STRUCT_EXTRACT':
      case 'OPERATOR_TRY':
      case 'OPERATOR_UNPACK':
      case 'OPERATOR_NULLIF':
        return { ...parts[0]!, row: parts.some((p) => p.row) };
      default:
        return constant(
          1,
          parts.some((p) => p.row),
        );
    }
  }

  private call(e: Json, scope: Scope): Bound {
    const name = String(e.function_name).toLowerCase();
    const rule = sizeRuleOf(name);
    if (rule === 'transform' || rule === 'filter' || rule === 'reduce') return this.lambda(e, rule, scope);
    const nodes: Json[] = e.children ?? [];
    const args = nodes.map((c) => this.expression(c, scope));
    this.expression(e.filter, scope);
    if (e.order_bys) this.modifier(e.order_bys, scope);
    const row = args.some((a) => a.row);
    return sizeOf(name, rule, nodes, args, row);
  }

  /**
   * A function that applies a lambda to each element of a list. The lambda's value is looked at
   * with the element as a symbol: what it takes from the element adds up to the list's size, what
   * it takes from elsewhere counts once per element (refused when both grow with the data).
   */
  private lambda(e: Json, rule: 'transform' | 'filter' | 'reduce', scope: Scope): Bound {
    const [listNode, fn, init] = e.children as Json[];
    const list = this.expression(listNode, scope);
    const start = init ? this.expression(init, scope) : constant(0);
    if (fn?.class !== 'LAMBDA') return sum([list, start]);
    const names: string[] = (fn.lhs.class === 'COLUMN_REF' ? [fn.lhs] : (fn.lhs.children ?? [])).map((c: Json) => String(c.column_names?.[0]).toLowerCase());
    const element = `e${++this.symbols}`;
    const acc = `a${this.symbols}`;
    this.env.set(element, list);
    this.env.set(acc, maxOf([list, start]));
    const bound = rule === 'reduce' ? [symbol(acc, list.row), symbol(element, list.row)] : [symbol(element, list.row)];
    const params = new Map(scope.params);
    names.forEach((name, i) => params.set(name, bound[i] ?? constant(FIXED_VALUE, list.row)));
    const body = this.expression(fn.expr, { ...scope, params });
    const own = body.k[element] ?? 0;
    const rest = without(body, [element, acc]);
    switch (rule) {
      case 'filter':
        return list;
      case 'transform':
        return sum([scale(list, own), times(list, rest)], FIXED_VALUE);
      case 'reduce':
        if ((body.k[acc] ?? 0) > 1) refuse('The reduce lambda takes its accumulator more than once, so its value doubles at each element.');
        return sum([list, start, scale(list, own), times(list, rest)]);
    }
  }

  private window(e: Json, scope: Scope): Bound {
    const args = (e.children ?? []).map((c: Json) => this.expression(c, scope));
    for (const x of [...(e.partitions ?? []), e.start_expr, e.end_expr, e.offset_expr, e.default_expr, e.filter_expr]) this.expression(x, scope);
    for (const o of [...(e.orders ?? []), ...(e.arg_orders ?? [])]) this.expression(o.expression, scope);
    const rule = sizeRuleOf(String(e.function_name).toLowerCase());
    if (rule === 'fixed') return constant(FIXED_VALUE, true);
    const nodes: Json[] = e.children ?? [];
    if (collects(rule, nodes)) {
      // A list over a frame of n rows: n values; over any other frame, up to the whole partition.
      const rows = frameRows(e);
      return rows === null ? POOL_VALUE : { ...times({ ...constant(0), items: rows }, sum(args)), row: true };
    }
    // One value of its arguments (lag, first_value, max), or one for each quantile asked for.
    const one = typeof rule === 'object' && 'each' in rule ? copies(args[0]!, nodes[rule.each], args[rule.each]) : sum(args);
    return { ...one, row: true };
  }

  /** Adds a computed value to the totals and refuses the query once they pass the limits. */
  private account(b: Bound): Bound {
    const value = substitute(b, this.env);
    if (!value.row) {
      this.constants += value.c;
      if (this.constants > SIZE_LIMITS.constantBytes) refuse(`Its constants take more than ${SIZE_LIMITS.constantBytes} bytes.`);
      return b;
    }
    this.perRow = sum([this.perRow, value]);
    const { c, k } = this.perRow;
    if (c > SIZE_LIMITS.rowBytes) refuse(`Its values take more than ${SIZE_LIMITS.rowBytes} bytes for one row.`);
    if ((k.data ?? 0) > SIZE_LIMITS.dataFactor) refuse(`Its values take more than ${SIZE_LIMITS.dataFactor} times the size of an event for one row.`);
    if ((k.pool ?? 0) > SIZE_LIMITS.poolFactor) refuse(`It keeps more than ${SIZE_LIMITS.poolFactor} aggregates' whole states (list, string_agg, ...) as values.`);
    return b;
  }
}
