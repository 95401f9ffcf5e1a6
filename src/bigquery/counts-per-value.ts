import type { Expr, FromIR, QueryIR } from './ir';
import { jsonKeysText, unnestColumn } from './ir';

/**
 * A chart's counts by time bucket, counted per value of the fields they read: the shape of a query
 * the DuckDB printer may count in two steps (print-duckdb.ts). Studio's charts count each bucket's
 * rows by conditions on one field (`count(CASE WHEN response.status_code >= 500 THEN 1 END)` per
 * `TIMESTAMP_TRUNC(timestamp, hour)`): evaluated on every row, the conditions were most of the
 * 7-day chart's time, while the field holds a few dozen values. Counted first per (bucket, value
 * of the field), each condition is evaluated once per value and its count is the sum of the counts
 * of the values it holds for: the same numbers.
 *
 * The shape: one SELECT over one source table (no join, DISTINCT or HAVING), grouped by
 * TIMESTAMP_TRUNC of a column only, whose outputs are those keys or COUNT / COUNTIF (not DISTINCT)
 * of values that read nothing but fields the source declares typed (their columns, and the unnest
 * aliases they are read through), ordered by output positions. The declared typed fields are
 * those a source keeps as columns for its charts and filters (few values each, such as a status or
 * a severity); a field of many values (an id) would make the first step as large as the rows, so
 * no other column, and no discovered field, takes this path.
 */
export interface CountsPerValue {
  from: Extract<FromIR, { t: 'table' }>;
  /** The GROUP BY keys (each a TIMESTAMP_TRUNC of a column of the range, its unit a literal). */
  keys: Bucket[];
  /** Per output, in order: the key it is (by index) or the count it is. */
  outputs: CountOutput[];
  /** The columns the counts may read (the range's, by name): the fields' typed columns and the unnest aliases' values. */
  leaves: string[];
}

/**
 * The query's counts-per-value shape, or null when it is not one (above).
 *
 * @example
 * countsPerValue(translated); // { from, keys: [timestamp_trunc], outputs: [{ key: 0 }, { count }, ...], leaves: ['__bq_a3', 'text:metadata.response.status_code', ...] }
 */
export function countsPerValue(query: QueryIR): CountsPerValue | null {
  const b = query.body;
  if (b.t !== 'select' || b.distinct || b.having || !b.groupBy.length || !b.from || b.from.t !== 'table') return null;
  if (!query.orderBy.every((o) => o.e.t === 'pos')) return null;
  const from = b.from;
  const buckets = b.groupBy;
  if (!buckets.every((k): k is Bucket => isBucket(k, from.alias))) return null;
  const leaves = new Set<string>();
  // Counts of values reading declared fields only, each read whole (print-duckdb.ts, `read`): what the first step groups by.
  const outputs = keysAndCounts(b.items, buckets, (arg) => readsOnly(arg, (f) => declaredField(f, from, leaves) !== null, true));
  if (outputs === null) return null;
  // Nothing read per row: a plain count per bucket gains nothing from a first step.
  if (!leaves.size) return null;
  return { from, keys: buckets, outputs, leaves: [...leaves] };
}

/** TIMESTAMP_TRUNC of a column of the range. */
/** A TIMESTAMP_TRUNC the first step may key on. */
type Bucket = Extract<Expr, { t: 'call' }>;

function isBucket(e: Expr, alias: string): e is Bucket {
  return e.t === 'call' && e.fn === 'timestamp_trunc' && e.args[0]?.t === 'col' && e.args[0].rel === alias && e.args[1]?.t === 'lit';
}

/** An output of a grouped count: the GROUP BY key it is (by index), or the count it is. */
export type CountOutput = { key: number } | { count: Extract<Expr, { t: 'agg' }> };

/**
 * Each output of a grouped SELECT as the key it is or a count (`count` / `COUNTIF`, not DISTINCT)
 * whose argument is absent or one `counted` accepts (given the count too); null when an output is neither. The
 * counts-per-value and counts-per-group shapes both take their outputs so.
 *
 * @example
 * keysAndCounts(select.items, select.groupBy, (arg) => readsOnly(arg, isStatus, true)); // [{ key: 0 }, { count }]
 */
export function keysAndCounts(items: ReadonlyArray<{ e: Expr }>, groupBy: readonly Expr[], counted: (arg: Expr, count: Extract<Expr, { t: 'agg' }>) => boolean): CountOutput[] | null {
  const keys = groupBy.map((k) => JSON.stringify(k));
  const outputs: CountOutput[] = [];
  for (const item of items) {
    const key = keys.indexOf(JSON.stringify(item.e));
    if (key >= 0) {
      outputs.push({ key });
      continue;
    }
    const e = item.e;
    if (e.t !== 'agg' || (e.fn !== 'count' && e.fn !== 'countif') || e.distinct) return null;
    if (e.arg !== null && !counted(e.arg, e)) return null;
    outputs.push({ count: e });
  }
  return outputs;
}

/**
 * The typed field a field of the range reads whole, from the source's declared ones (its typed
 * columns and unnest alias added to `leaves`), or null.
 *
 * @example
 * declaredField(statusField, from, leaves); // { declared: true, path: 'response.status_code', text: 'text:metadata.response.status_code', ... }
 */
export function declaredField(e: Extract<Expr, { t: 'field' }>, from: Extract<FromIR, { t: 'table' }>, leaves: Set<string>) {
  if (e.rel !== from.alias || e.element) return null;
  const typed = e.typed?.fields[jsonKeysText([...(e.unnest?.path ?? []), ...e.path])];
  if (!typed?.declared) return null;
  leaves.add(typed.text).add(typed.json);
  if (e.unnest) leaves.add(unnestColumn(e.unnest));
  return typed;
}

/**
 * Whether a value reads nothing of the range but the fields `field` accepts, literals, and the
 * clock when `now` is true: what a count may read for its rows to be counted per value.
 *
 * @example
 * readsOnly(countifArg, (f) => declaredField(f, from, leaves) !== null, true); // true
 */
export function readsOnly(e: Expr, field: (f: Extract<Expr, { t: 'field' }>) => boolean, now: boolean): boolean {
  const reads = (a: Expr) => readsOnly(a, field, now);
  switch (e.t) {
    case 'lit':
    case 'ts':
    case 'interval':
      return true;
    case 'now':
      return now;
    case 'field':
      return field(e);
    case 'conv':
    case 'cast':
      return reads(e.arg);
    case 'call':
    case 'op':
      return e.args.every(reads);
    case 'in':
      return reads(e.arg) && e.list.every(reads);
    case 'between':
      return [e.arg, e.lo, e.hi].every(reads);
    case 'case':
      return e.whens.every(([c, r]) => reads(c) && reads(r)) && (e.else === null || reads(e.else));
    default:
      // A column of the range (any values), an aggregate, a subquery, a position.
      return false;
  }
}
