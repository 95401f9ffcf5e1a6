import { typedPairName } from '../sources/typed-hourly';
import type { Expr, FromIR, QueryIR } from './ir';
import { declaredField, keysAndCounts, readsOnly, type CountOutput } from './counts-per-value';

/**
 * A count grouped by declared typed fields whose counts per hour are kept: a declared pair's (the
 * pairs rollup, src/sources/typed-hourly.ts) or one field's (the hour counts): the shape whose rows a DuckDB text may count
 * in two steps, the first reading the hour counts for the window's whole hours (print-duckdb.ts).
 * The Explorer's Top Paths (`group by r.path, r.search`, `count(timestamp)`) and Error Count by
 * User (`where p.error_severity in (...)`, grouped by the user and the severity) are of it: over a
 * week they read 4 M and 2.5 M rows where the hour counts hold a few thousand.
 *
 * The shape: one SELECT over one source table (no CTE, join, DISTINCT or HAVING), grouped by one
 * or two declared typed fields read whole (`p.user_name`), two only when the source declares them
 * a pair (`typedPairs`), whose outputs are those keys or counts: `count(*)`, `count` of the
 * range's `timestamp`, or `count` / `COUNTIF` (not DISTINCT) of values reading the keys' fields
 * alone; its WHERE, if any, reads those fields alone; ordered by output positions. Every row of a
 * whole hour then passes the WHERE exactly when its counted values do, so the hour counts' rows of
 * the pair are the rows' counts per value.
 */
export interface CountsPerGroup {
  from: Extract<FromIR, { t: 'table' }>;
  /** The relation of those counts: the source's pairs rollup (`<relation>_typed_pairs`), or its hour counts for one field. */
  relation: string;
  /** The rows it reads of it (their `field`): the pair's name, or the one field's path. */
  field: string;
  /** The fields those rows hold, in the rollup's order (`text`/`json`, then `text2`/`json2`). */
  fields: readonly string[];
  /** The GROUP BY keys. */
  keys: Expr[];
  /** Per output, in order: the key it is (by index), or the count it is. */
  outputs: CountOutput[];
  /** The columns the keys, the WHERE and the counts read: the fields' typed columns and their unnest aliases. */
  leaves: string[];
}

/**
 * The query's counts-per-group shape, or null when it is not one (above).
 *
 * @example
 * countsPerGroup(topPaths); // { field: 'request.path+request.search', fields: ['request.path', 'request.search'], keys: [...], outputs: [{ key: 0 }, { key: 1 }, { count }], leaves: [...] }
 */
export function countsPerGroup(query: QueryIR): CountsPerGroup | null {
  const b = query.body;
  if (query.ctes.length || b.t !== 'select' || b.distinct || b.having || !b.from || b.from.t !== 'table' || b.from.cte) return null;
  if (!query.orderBy.every((o) => o.e.t === 'pos')) return null;
  const from = b.from;
  const typed = from.typed?.metadata;
  if (b.groupBy.length < 1 || b.groupBy.length > 2) return null;
  const leaves = new Set<string>();
  const paths: string[] = [];
  for (const key of b.groupBy) {
    const path = declaredPath(key, from, leaves);
    if (path === null) return null;
    paths.push(path);
  }
  if (new Set(paths).size !== paths.length) return null;
  // One field: its rows of the hour counts; two: a declared pair's rows of the pairs rollup.
  const pair = paths.length === 1 ? null : (typed?.pairs?.fields ?? []).find((p) => p.every((f) => paths.includes(f)));
  const relation = pair === null ? typed?.hourly : pair === undefined ? undefined : typed?.pairs?.relation;
  if (relation === undefined || pair === undefined) return null;
  // The clock is kept out: the same whenever a row is counted, but not a grouped field.
  const readsGrouped = (e: Expr) => readsOnly(e, (f) => paths.includes(declaredPath(f, from, leaves) ?? ''), false);
  // `count(timestamp)`: every row of the range has one (Top Paths counts so).
  const countsTimestamp = (arg: Expr, count: { fn: string }) => count.fn === 'count' && arg.t === 'col' && arg.rel === from.alias && arg.name === 'timestamp';
  const outputs = keysAndCounts(b.items, b.groupBy, (arg, count) => countsTimestamp(arg, count) || readsGrouped(arg));
  if (outputs === null) return null;
  if (b.where && !readsGrouped(b.where)) return null;
  return { from, relation, field: pair === null ? paths[0]! : typedPairName(pair), fields: pair ?? paths, keys: b.groupBy, outputs, leaves: [...leaves] };
}

/** The dotted path of a declared typed field read whole (its columns and unnest alias added to `leaves`), or null. */
function declaredPath(e: Expr, from: Extract<FromIR, { t: 'table' }>, leaves: Set<string>): string | null {
  return e.t === 'field' ? (declaredField(e, from, leaves)?.path ?? null) : null;
}
