import type { ColumnType } from '../sql/column-types';
import type { TypedJson } from './schema';

/**
 * The translated query, between BigQuery's tree and the engines' SQL: names resolved, every value
 * typed, every BigQuery function replaced by a neutral operation. Printed once for DuckDB (the
 * text the sandbox checks) and once for ClickHouse, so both run the same tree.
 */

/** A value's kind: a column type, or NULL (no kind yet), or an interval (only as an argument). */
export type Kind = ColumnType | 'null' | 'interval';

/** Units of TIMESTAMP_TRUNC, TIMESTAMP_ADD/SUB and INTERVAL (fixed lengths in UTC). */
export type TimeUnit = 'microsecond' | 'millisecond' | 'second' | 'minute' | 'hour' | 'day';

/** Where an unnest alias's values come from, relative to its table's row. */
export interface UnnestAlias {
  /** Its name in its range (`a1`, `a2`, ...): its column on DuckDB, its place in the tuple of combinations on ClickHouse. */
  slot: string;
  /** The JSON column at the root of its chain. */
  column: string;
  /** Path from that column to the unnested value (`['request']` for `unnest(m.request)`). */
  path: string[];
  /** The alias it unnests a field of, or null for the column itself. */
  parent: UnnestAlias | null;
}

export type Expr =
  | { t: 'lit'; kind: 'text' | 'integer' | 'float' | 'boolean' | 'null'; value: string | boolean | null }
  | { t: 'ts'; micros: bigint }
  /** CURRENT_TIMESTAMP(): the request's clock, the endpoint's bound `$now` (never the engine's). */
  | { t: 'now' }
  | { t: 'interval'; n: bigint; unit: TimeUnit }
  | { t: 'col'; rel: string; name: string; kind: Kind }
  /** `typed`: the JSON column's fields its range also holds as columns (schema.ts, `TypedJson`). */
  | { t: 'field'; rel: string; column: string; unnest: UnnestAlias | null; path: string[]; element?: Element; typed?: TypedJson }
  | { t: 'conv'; to: 'text' | 'float' | 'boolean'; arg: Expr }
  | { t: 'call'; fn: string; args: Expr[]; kind: Kind }
  | { t: 'op'; op: Op; args: Expr[]; kind: Kind }
  | { t: 'in'; arg: Expr; list: Expr[]; not: boolean }
  | { t: 'in_query'; arg: Expr; query: QueryIR; not: boolean }
  | { t: 'exists'; query: QueryIR; not: boolean }
  | { t: 'between'; arg: Expr; lo: Expr; hi: Expr; not: boolean }
  | { t: 'case'; whens: Array<[Expr, Expr]>; else: Expr | null; kind: Kind }
  | { t: 'cast'; arg: Expr; to: ColumnType; safe: boolean }
  /** `at`: the one quantile of fn `quantile`; `every`: of fn `quantiles`, APPROX_QUANTILES(x, n) as a whole (kind JSON), the exact decimals k/n for k = 0..n, each by `Quantile`'s rule. */
  | { t: 'agg'; fn: AggFn; arg: Expr | null; distinct: boolean; kind: Kind; at?: Quantile; every?: string[] }
  | { t: 'subquery'; query: QueryIR; kind: Kind }
  | { t: 'pos'; index: number; kind: Kind };

/**
 * `m.parsed[SAFE_OFFSET(k)].error_severity`: the field's path up to `at` is a repeated record and
 * the rest of the path is read in its element k (0-based). An array gives its element k; any
 * other value is a repeated field of one element, as BigQuery would see it (Logflare's schema
 * makes an object one record), so element 0 is the value itself; a missing or null one is NULL.
 * Out of bounds is NULL when `safe`, otherwise the query fails, as BigQuery's OFFSET does.
 */
export interface Element {
  at: number;
  k: number;
  safe: boolean;
}

export type Op = '+' | '-' | '*' | '/' | '||' | '=' | '<>' | '<' | '<=' | '>' | '>=' | 'and' | 'or' | 'not' | 'neg' | 'is_null' | 'is_not_null' | 'like' | 'not_like';

export type AggFn = 'count' | 'countif' | 'sum' | 'avg' | 'min' | 'max' | 'any_value' | 'logical_and' | 'logical_or' | 'approx_count_distinct' | 'quantile' | 'quantiles';

/**
 * `APPROX_QUANTILES(x, n)[OFFSET(k)]`: of the non-NULL values sorted, the one at 1-based position
 * max(1, ceil(k * count / n)) (DuckDB's `quantile_disc` at the exact decimal k/n), NULL when none.
 */
export interface Quantile {
  k: number;
  n: number;
  /** k/n written as an exact decimal (`0.95`). */
  decimal: string;
}

export interface OutputColumn {
  name: string;
  kind: ColumnType;
}

export interface QueryIR {
  ctes: Array<{ name: string; query: QueryIR }>;
  body: BodyIR;
  orderBy: Array<{ e: Expr; desc: boolean; nullsFirst: boolean | null }>;
  limit: bigint | null;
  offset: bigint | null;
  columns: OutputColumn[];
}

export type BodyIR = SelectIR | SetOpIR;

export interface SetOpIR {
  t: 'setop';
  op: 'union' | 'intersect' | 'except';
  all: boolean;
  left: QueryIR;
  right: QueryIR;
}

export interface SelectIR {
  t: 'select';
  distinct: boolean;
  items: Array<{ e: Expr; name: string }>;
  from: FromIR | null;
  where: Expr | null;
  groupBy: Expr[];
  having: Expr | null;
}

/** A range in FROM: a table (an endpoint's CTE or the query's own) or a subquery, with its unnests. */
export type FromIR =
  | { t: 'table'; name: string; alias: string; unnests: UnnestAlias[]; cte: boolean; typed?: Readonly<Record<string, TypedJson>> }
  | { t: 'subquery'; query: QueryIR; alias: string; unnests: UnnestAlias[] }
  | { t: 'join'; kind: 'inner' | 'left' | 'right' | 'full' | 'cross'; left: FromIR; right: FromIR; on: Expr | null };

/** What the printers' own columns start with: no column a query reads may. */
export const RESERVED_PREFIX = '__bq_';

/** The column of a range holding the row's unnest combinations on ClickHouse (where some value is an array).  *
 * @example
 * `SELECT *, arrayJoin(...) AS "${UNNEST_COLUMN}" FROM edge_logs`
 */
export const UNNEST_COLUMN = `${RESERVED_PREFIX}unnest`;

/**
 * The column holding an unnest alias's value on DuckDB, one per alias (NULL where its JSON column
 * holds no array).
 *
 * @example
 * unnestColumn(alias); // '__bq_a2'
 */
export function unnestColumn(alias: UnnestAlias): string {
  return `${RESERVED_PREFIX}${alias.slot}`;
}

/**
 * A JSONPath's keys as the text literal `json_value_text` and `json_query_text` carry (a key
 * holds no NUL), and back; no keys (`$`) is the empty text.
 *
 * @example
 * jsonKeys(jsonKeysText(['auth_event', 'action'])); // ['auth_event', 'action']
 */
export function jsonKeysText(keys: readonly string[]): string {
  return keys.join('\u0000');
}

/** The keys of a `jsonKeysText` (above). @example jsonKeys(''); // [] */
export function jsonKeys(text: string): string[] {
  return text === '' ? [] : text.split('\u0000');
}
