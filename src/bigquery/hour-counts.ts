import type { CountsPerGroup } from './counts-per-group';
import type { CountsPerValue } from './counts-per-value';
import type { Expr, QueryIR } from './ir';

/**
 * A chart counted per value (counts-per-value.ts) whose first step may be read, for the window's
 * whole hours, from the source's hour counts (src/sources/typed-hourly.ts) instead of its rows: its
 * counts read one declared typed field, its buckets are ones the hour refines (hour, day) of the
 * range's `timestamp`, and its WHERE reads nothing but that timestamp against constants (a
 * conjunction of `<`, `<=`, `>`, `>=`). Every row of an hour inside the window passes that WHERE,
 * so the hour's counts per value are the first step's rows of that hour; an engine reads the hour
 * counts only for hours wholly inside the window (this WHERE's and its source table's bounds) and
 * the rows for the rest (docs/definitions.md, "Typed fields"). Studio's charts are of this shape:
 * `where t.timestamp > '<start>'` over `edge_logs t cross join unnest(...)`.
 */
export interface HourCounts {
  /** The relation of the hour counts (the source's `<relation>_typed_hourly`; a pair's: `<relation>_typed_pairs`). */
  hourly: string;
  /** The hour counts' rows read (their `field`): the field the counts read (dotted: `response.status_code`), or a declared pair's name. */
  field: string;
  /** A count grouped by fields (counts-per-group.ts): the fields those rows hold, in their order. */
  groups?: readonly string[];
  /** The first and last instants (microseconds) the WHERE keeps; null where it sets no bound. */
  from: bigint | null;
  until: bigint | null;
}

/**
 * The query's hour-counts shape, or null when it is not one (above).
 *
 * @example
 * hourCountsOf(query, countsPerValue(query)!); // { hourly: 'edge_logs_typed_hourly', field: 'response.status_code', from: 1794225600000001n, until: null }
 */
export function hourCountsOf(query: QueryIR, counts: CountsPerValue): HourCounts | null {
  const { from } = counts;
  const typed = from.typed?.metadata;
  if (query.ctes.length || query.body.t !== 'select' || !typed?.hourly) return null;
  if (!counts.keys.every((k) => k.args.length === 2 && isTimestamp(k.args[0]!, from.alias) && ['hour', 'day'].includes(String((k.args[1] as { value: unknown }).value)))) return null;
  // The one declared field whose columns the counts read (the rest of the leaves are unnest aliases).
  const fields = Object.values(typed.fields).filter((f) => f.declared && (counts.leaves.includes(f.text) || counts.leaves.includes(f.json)));
  if (fields.length !== 1 || fields[0]!.path === undefined) return null;
  const window = { from: null as bigint | null, until: null as bigint | null };
  if (query.body.where && !bounds(query.body.where, from.alias, window)) return null;
  return { hourly: typed.hourly, field: fields[0]!.path, ...window };
}

function isTimestamp(e: Expr, alias: string): boolean {
  return e.t === 'col' && e.rel === alias && e.name === 'timestamp';
}

/** Narrows `window` by a conjunction of comparisons of the range's timestamp with constants; false when the condition is anything else. */
function bounds(e: Expr, alias: string, window: { from: bigint | null; until: bigint | null }): boolean {
  if (e.t !== 'op') return false;
  if (e.op === 'and') return e.args.every((a) => bounds(a, alias, window));
  if (!['<', '<=', '>', '>='].includes(e.op) || e.args.length !== 2) return false;
  const [a, b] = e.args as [Expr, Expr];
  // `c op column` is `column op' c`.
  const flipped = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as Record<string, string>;
  const [op, value] = isTimestamp(a, alias) && b.t === 'ts' ? [e.op, b.micros] : isTimestamp(b, alias) && a.t === 'ts' ? [flipped[e.op]!, a.micros] : [null, 0n];
  if (op === null) return false;
  if (op === '>' || op === '>=') {
    const first = op === '>' ? value + 1n : value;
    if (window.from === null || first > window.from) window.from = first;
  } else {
    const last = op === '<' ? value - 1n : value;
    if (window.until === null || last < window.until) window.until = last;
  }
  return true;
}

/**
 * A count grouped by declared fields (counts-per-group.ts) read from the hour counts for the
 * window's whole hours: its WHERE reads the grouped fields alone, so the window is the source
 * table's bounds alone (no bound of its own).
 *
 * @example
 * groupHourCountsOf(countsPerGroup(topPaths)!); // { hourly: 'edge_logs_typed_pairs', field: 'request.path+request.search', groups: [...], from: null, until: null }
 */
export function groupHourCountsOf(groups: CountsPerGroup): HourCounts {
  return { hourly: groups.relation, field: groups.field, groups: groups.fields, from: null, until: null };
}
