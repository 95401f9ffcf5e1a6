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
  outputs: Array<{ key: number } | { count: Extract<Expr, { t: 'agg' }> }>;
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
  const keys = buckets.map((k) => JSON.stringify(k));
  const outputs: CountsPerValue['outputs'] = [];
  const leaves = new Set<string>();
  for (const item of b.items) {
    const key = keys.indexOf(JSON.stringify(item.e));
    if (key >= 0) {
      outputs.push({ key });
      continue;
    }
    const e = item.e;
    if (e.t !== 'agg' || (e.fn !== 'count' && e.fn !== 'countif') || e.distinct) return null;
    if (e.arg !== null && !readsDeclaredFields(e.arg, from, leaves)) return null;
    outputs.push({ count: e });
  }
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

/** Whether a value reads only fields the range's source declares typed, each read whole; their columns added to `leaves`. */
function readsDeclaredFields(e: Expr, from: Extract<FromIR, { t: 'table' }>, leaves: Set<string>): boolean {
  switch (e.t) {
    case 'lit':
    case 'ts':
    case 'now':
    case 'interval':
      return true;
    case 'field': {
      if (e.rel !== from.alias || e.element) return false;
      // Read whole from its typed column (print-duckdb.ts, `read`): what the first step groups by.
      const typed = e.typed?.fields[jsonKeysText([...(e.unnest?.path ?? []), ...e.path])];
      if (!typed?.declared) return false;
      leaves.add(typed.text).add(typed.json);
      if (e.unnest) leaves.add(unnestColumn(e.unnest));
      return true;
    }
    case 'conv':
    case 'cast':
      return readsDeclaredFields(e.arg, from, leaves);
    case 'call':
    case 'op':
      return e.args.every((a) => readsDeclaredFields(a, from, leaves));
    case 'in':
      return readsDeclaredFields(e.arg, from, leaves) && e.list.every((a) => readsDeclaredFields(a, from, leaves));
    case 'between':
      return [e.arg, e.lo, e.hi].every((a) => readsDeclaredFields(a, from, leaves));
    case 'case':
      return e.whens.every(([c, r]) => readsDeclaredFields(c, from, leaves) && readsDeclaredFields(r, from, leaves)) && (e.else === null || readsDeclaredFields(e.else, from, leaves));
    default:
      // A column of the range (any values), an aggregate, a subquery, a position.
      return false;
  }
}
