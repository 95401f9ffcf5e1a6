import { InvalidSqlError } from '../errors';

/**
 * An upper bound on the bytes of a value a query computes: `c` bytes plus, for each symbol, its
 * coefficient times what the symbol stands for: `data` the largest value of an event, `pool` the
 * largest value an aggregate's state can grow to within DuckDB's memory limit, and the symbols
 * the check gives a recursive CTE's row or a lambda's element while it looks at them.
 *
 * @example
 * times(constant(3), perEvent); // three times an event's value
 */
export interface Bound {
  c: number;
  k: Readonly<Record<string, number>>;
  /** Computed for each row (false: a constant, which DuckDB computes once while it plans the query). */
  row: boolean;
  /** The most elements of a list, where known (a constant `range`): else its bytes tell. */
  items?: number;
}

/** A value of an endpoint's CTE: a part of an event. */
export const EVENT_VALUE: Bound = { c: 64, k: { data: 1 }, row: true };

/** What an aggregate that keeps every value it sees can hold (its state counts against DuckDB's limit). */
export const POOL_VALUE: Bound = { c: 0, k: { pool: 1 }, row: true };

export function constant(c: number, row = false): Bound {
  return { c, k: {}, row };
}

export function symbol(name: string, row: boolean): Bound {
  return { c: 0, k: { [name]: 1 }, row };
}

/** Whether the bound grows with anything (data, an aggregate, a symbol). */
export function symbolic(b: Bound): boolean {
  return Object.values(b.k).some((n) => n > 0);
}

export function sum(bounds: readonly Bound[], extra = 0): Bound {
  const k: Record<string, number> = {};
  let c = extra;
  for (const b of bounds) {
    c += b.c;
    for (const [name, n] of Object.entries(b.k)) k[name] = (k[name] ?? 0) + n;
  }
  return { c, k, row: bounds.some((b) => b.row) };
}

export function scale(b: Bound, factor: number, extra = 0): Bound {
  const k: Record<string, number> = {};
  for (const [name, n] of Object.entries(b.k)) k[name] = n * factor;
  return { c: b.c * factor + extra, k, row: b.row };
}

export function maxOf(bounds: readonly Bound[]): Bound {
  const k: Record<string, number> = {};
  let c = 0;
  for (const b of bounds) {
    c = Math.max(c, b.c);
    for (const [name, n] of Object.entries(b.k)) k[name] = Math.max(k[name] ?? 0, n);
  }
  return { c, k, row: bounds.some((b) => b.row) };
}

/** The bound without the given symbols (what does not depend on them). */
export function without(b: Bound, names: readonly string[]): Bound {
  const k: Record<string, number> = {};
  for (const [name, n] of Object.entries(b.k)) if (!names.includes(name)) k[name] = n;
  return { ...b, k };
}

/** Bytes per list element the check assumes when it counts a list's elements from its bytes. */
const BYTES_PER_ITEM = 4;

/**
 * `each` for every element of `list` (a lambda's value for each element, a replacement for each
 * match). Refused when both grow with the data: a value that grows with the square of the data.
 */
export function times(list: Bound, each: Bound): Bound {
  if (symbolic(list) && symbolic(each)) {
    throw new InvalidSqlError(
      'too_large',
      'The query builds a value that grows with the square of the data (a value repeated for each element or match of another); the limits are in the docs (sandboxing).',
    );
  }
  const row = list.row || each.row;
  if (list.items !== undefined || !symbolic(list)) {
    const n = list.items ?? Math.ceil(list.c / BYTES_PER_ITEM);
    return { ...scale(each, n), row };
  }
  return { ...scale(list, each.c / BYTES_PER_ITEM), row };
}

/** Replaces each symbol of `env` by its bound (and theirs in turn), leaving `data` and `pool`. */
export function substitute(b: Bound, env: ReadonlyMap<string, Bound>): Bound {
  let out: Bound = { ...b, k: {} };
  for (const [name, n] of Object.entries(b.k)) {
    const value = env.get(name);
    out = sum([out, value ? scale(substitute(value, env), n) : { c: 0, k: { [name]: n }, row: false }]);
    out.row = b.row;
  }
  return out;
}
