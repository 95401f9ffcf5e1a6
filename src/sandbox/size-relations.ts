import { constant, EVENT_VALUE, maxOf, sum, type Bound } from './size-bound';

/**
 * The values of a relation in a caller's FROM (a table, a CTE, a subquery), for the size check:
 * its whole row (what `*` reads) and a bound for each column a name reads. A column reference is
 * one column's value, so `SELECT *, f(x) AS a FROM t` and then `a` is bounded by `f(x)`, not by the
 * whole row of `t` beside it: a query that adds a column per step (an unnest per level) does not
 * double its bound at each step.
 *
 * @example
 * columnOf(EVENT_RELATION, 'metadata'); // EVENT_VALUE: any column of an endpoint's table is a part of an event
 */
export interface Relation {
  /** All its columns together. */
  row: Bound;
  /** Columns by name (lower case), where the select list names them; each bound already covers `others`. */
  columns: ReadonlyMap<string, Bound>;
  /** Any column whose name is not in `columns` (unnamed expressions, renamed duplicates, a table's columns). */
  others: Bound;
}

/** A table of the endpoint: each column a part of an event. */
export const EVENT_RELATION: Relation = { row: EVENT_VALUE, columns: new Map(), others: EVENT_VALUE };

/** A relation whose columns' names are unknown: each column at most `widest`. */
export function opaque(row: Bound, widest: Bound = row): Relation {
  return { row, columns: new Map(), others: widest };
}

/** The bound of the column `name` of `relation`. */
export function columnOf(relation: Relation, name: string): Bound {
  return relation.columns.get(name) ?? relation.others;
}

/** The largest column of `relation`. */
export function widest(relation: Relation): Bound {
  return maxOf([...relation.columns.values(), relation.others]);
}

/** `relation` under new column names (`AS t(a, b)`, `WITH t(a, b) AS`): a name says nothing any more. */
export function renamed(relation: Relation, aliases: unknown): Relation {
  return Array.isArray(aliases) && aliases.length > 0 ? opaque(relation.row, widest(relation)) : relation;
}

/** One item of a select list: the name it gives its column (null: none known), its bound, and for a plain `*` the relation it expands. */
export interface SelectItem {
  name: string | null;
  value: Bound;
  star?: Relation;
}

/**
 * The relation a select list makes. A name given by `AS` is bounded by its item; a plain `*` passes
 * on its relation's names; anything else (unnamed expressions, the columns a `*` brings without
 * known names, a name given twice, which DuckDB renames) goes to `others`, and every name's bound
 * covers `others` too, so whichever column DuckDB binds a name to, its bound holds.
 */
export function selectRelation(items: readonly SelectItem[]): Relation {
  const named = new Map<string, Bound[]>();
  const rest: Bound[] = [];
  const add = (name: string, value: Bound) => named.set(name, [...(named.get(name) ?? []), value]);
  for (const item of items) {
    if (item.star) {
      for (const [name, value] of item.star.columns) add(name, value);
      rest.push(item.star.others);
    } else if (item.name !== null) add(item.name.toLowerCase(), item.value);
    else rest.push(item.value);
  }
  for (const values of named.values()) if (values.length > 1) rest.push(...values);
  const others = maxOf(rest.length ? rest : [constant(0)]);
  const columns = new Map([...named].map(([name, values]) => [name, maxOf([...values, others])]));
  return { row: sum(items.map((i) => i.value)), columns, others };
}
