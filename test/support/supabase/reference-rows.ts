import type { Micros } from './instants';
import type { LogTable, VectorEvents } from './vector-sources';

/**
 * The building blocks of the reference (reference.ts): the rows of a `logs.all` table, unnesting,
 * SQL's three-valued logic and comparisons, and Logflare's wire format, in plain TypeScript with no
 * SQL engine and nothing of src/ (docs/supabase.md and docs/sandboxing.md state the rules).
 */

/** The id of a row whose event was sent without one: the server makes a UUID, any is right. */
export const ANY_ID = '<any id the server made>';

/** A row of one of `logs.all`'s tables. */
export interface TableRow {
  id: string;
  micros: Micros;
  event_message: string | null;
  /** The stored `metadata`, null when the event has none. */
  metadata: unknown;
}

/** SQL's boolean: true, false or NULL (unknown). */
export type Tri = boolean | null;

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

/** Microseconds of an ISO 8601 UTC timestamp; digits past the microsecond are dropped (truncated). */
export function timestampMicros(text: string): Micros {
  const m = ISO.exec(text);
  if (!m) throw new Error(`reference: the fixtures write no timestamp like ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, frac = ''] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  return ms * 1000 + Number((frac + '000000').slice(0, 6));
}

/** The bounds of a request as Studio sends them: `''` is no bound. */
export interface Range {
  iso_timestamp_start: string;
  iso_timestamp_end: string;
}

/**
 * The rows a table holds for a request: its feed's events after `iso_timestamp_start` (exclusive)
 * and at or before `iso_timestamp_end`, and no tier window (the preset keeps none: Studio sends no
 * tier, and its "Last 7 days" is the week). Every event counts for the one project (single-project
 * mode).
 */
export function tableRows(events: VectorEvents, table: LogTable, range: Range): TableRow[] {
  const lower = range.iso_timestamp_start === '' ? -Infinity : Date.parse(range.iso_timestamp_start) * 1000;
  const upper = range.iso_timestamp_end === '' ? Infinity : Date.parse(range.iso_timestamp_end) * 1000;
  const rows: TableRow[] = [];
  for (const event of events[table]) {
    const micros = timestampMicros(event.timestamp as string);
    if (micros <= lower || micros > upper) continue;
    rows.push({
      id: typeof event.id === 'string' ? event.id : ANY_ID,
      micros,
      event_message: typeof event.event_message === 'string' ? event.event_message : null,
      metadata: event.metadata ?? null,
    });
  }
  return rows;
}

/**
 * `cross join unnest(x)`: an object is one row (itself), an array one row per element, and a row
 * whose `x` is missing (or empty, or not a record) is KEPT with NULLs: docs/supabase.md's Decision
 * (Logflare on Postgres drops it).
 */
export function unnest(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.length ? value : [null];
  return [value !== null && typeof value === 'object' ? value : null];
}

/** `record.key`: the field's JSON value, NULL when the record or the field is missing. */
export function field(record: unknown, key: string): unknown {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return null;
  const value = (record as Record<string, unknown>)[key];
  return value === undefined ? null : value;
}

export function and3(...values: Tri[]): Tri {
  if (values.includes(false)) return false;
  return values.includes(null) ? null : true;
}

export function or3(...values: Tri[]): Tri {
  if (values.includes(true)) return true;
  return values.includes(null) ? null : false;
}

export function not3(value: Tri): Tri {
  return value === null ? null : !value;
}

/** `a = b` (and `<`, `>=`, ...): NULL when either side is; numbers as numbers, text as text. */
export function compare(a: unknown, op: '=' | '!=' | '<' | '<=' | '>' | '>=', b: unknown): Tri {
  if (a === null || b === null) return null;
  if (typeof a !== typeof b) throw new Error(`reference: compares ${JSON.stringify(a)} with ${JSON.stringify(b)}`);
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case '=':
      return x === y;
    case '!=':
      return x !== y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
  }
}

export function between(value: unknown, low: number, high: number): Tri {
  return and3(compare(value, '>=', low), compare(value, '<=', high));
}

/** `x IN (...)`: NULL for a NULL `x` (no NULL in the lists Studio writes). */
export function isIn(value: unknown, list: readonly (string | number)[]): Tri {
  return value === null ? null : list.includes(value as string | number);
}

/** `x LIKE pattern`: `%` any text (newlines too), `_` one character, case-sensitive. */
export function like(value: unknown, pattern: string): Tri {
  if (value === null) return null;
  const source = [...pattern].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`, 'su').test(String(value));
}

/** `regexp_contains(x, pattern)`: a search anywhere in `x` (RE2; the patterns here mean the same in JavaScript). */
export function regexpContains(value: unknown, pattern: string): Tri {
  return value === null ? null : new RegExp(pattern, 'u').test(String(value));
}

export function startsWith(value: unknown, prefix: string): Tri {
  return value === null ? null : String(value).startsWith(prefix);
}

/** `SAFE_CAST(x AS INT64)`: NULL when it is not a whole number. */
export function safeInt(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(n) ? n : null;
}

/** `CAST(x AS INT64)`: a value that is not a whole number is an error (the fixtures have none). */
export function castInt(value: unknown): number | null {
  if (value === null) return null;
  const n = safeInt(value);
  if (n === null) throw new Error(`reference: CAST(${JSON.stringify(value)} AS INT64) fails`);
  return n;
}

export function ifNull<T>(value: unknown, otherwise: T): unknown {
  return value === null ? otherwise : value;
}

/**
 * A value in Logflare's wire format (docs/supabase.md, "Wire format"): an object becomes a
 * one-element array of its record, recursively; an array stays an array whose objects are records.
 */
export function wire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(element);
  if (value !== null && typeof value === 'object') return [record(value as Record<string, unknown>)];
  return value;
}

function element(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(element);
  if (value !== null && typeof value === 'object') return record(value as Record<string, unknown>);
  return value;
}

function record(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) out[key] = wire(value);
  return out;
}

/** Rows in order of `key`, grouped where the key ties (the order within a tie is the engine's). */
export function tieGroups<R>(rows: readonly R[], key: (row: R) => number | string | null, direction: 'asc' | 'desc'): R[][] {
  const sign = direction === 'asc' ? 1 : -1;
  const keyed = rows.map((row) => ({ row, k: key(row) }));
  // NULLs first ascending, last descending (BigQuery's default: NULL is the smallest).
  const rank = (k: number | string | null) => (k === null ? -Infinity : k);
  keyed.sort((a, b) => (rank(a.k) < rank(b.k) ? -sign : rank(a.k) > rank(b.k) ? sign : 0));
  const groups: R[][] = [];
  for (let i = 0; i < keyed.length; i++) {
    if (i > 0 && keyed[i]!.k === keyed[i - 1]!.k) groups.at(-1)!.push(keyed[i]!.row);
    else groups.push([keyed[i]!.row]);
  }
  return groups;
}
