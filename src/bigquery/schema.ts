import type { ColumnType } from '../sql/column-types';

/**
 * What a caller's BigQuery SQL may read: the tables (an endpoint's CTEs, one per source) with
 * their columns and kinds, as plain data (built from the sources' descriptors by whoever wires an
 * endpoint; docs/sandboxing.md, "BigQuery dialect").
 *
 * @example
 * const schema: BigQuerySchema = {
 *   tables: {
 *     edge_logs: {
 *       columns: { id: 'text', timestamp: 'timestamp', event_message: 'text', metadata: 'json' },
 *       fields: { metadata: ['request.path', 'request.method', 'response.status_code'] },
 *     },
 *   },
 * };
 */
export interface BigQuerySchema {
  /** Table name (lower case, as callers write it in FROM) -> its columns. */
  readonly tables: Readonly<Record<string, BigQueryTable>>;
}

/** One table a caller may read. */
export interface BigQueryTable {
  /**
   * Column name (lower case) -> kind, in order. `timestamp` columns hold UTC instants to the
   * microsecond; `json` columns hold JSON values of any shape (a source's `metadata`).
   */
  readonly columns: Readonly<Record<string, ColumnType>>;
  /**
   * Field paths known to exist inside a JSON column (dotted, from the column: `request.path`).
   * They only serve bare names: `where path like ...` reads `r.path` when the unnest alias `r`
   * (of `m.request`) is the one range variable whose known fields have `path`. Fields not listed
   * still read fine when qualified (`r.anything`).
   */
  readonly fields?: Readonly<Record<string, readonly string[]>>;
  /**
   * By JSON column: its fields the table also holds as columns of their own (a source's typed
   * fields, src/sources/typed-fields.ts), which the DuckDB text reads instead of parsing the JSON.
   */
  readonly typed?: Readonly<Record<string, TypedJson>>;
}

/**
 * A JSON column's fields held as columns of their own: each column holds, on every row, what the
 * DuckDB text's expression of the field gives (`json_extract_string` and `json_extract` by its
 * whole path), and `arrays` whether the JSON text holds a `[` (`contains`).
 *
 * @example
 * const typed: TypedJson = { arrays: 'arrays:metadata', fields: { [jsonKeysText(['request', 'path'])]: { text: 'text:metadata.request.path', json: 'json:metadata.request.path' } } };
 */
export interface TypedJson {
  readonly arrays: string;
  /**
   * By the path's keys (`jsonKeysText`, ir.ts): the columns of its text and of its JSON value, and
   * whether the source declares the field (its `typedFields`) rather than compaction discovering it.
   */
  readonly fields: Readonly<Record<string, { readonly text: string; readonly json: string; readonly declared?: boolean; readonly path?: string }>>;
  /**
   * The relation of the declared fields' counts per (project, hour, field, value): columns
   * `timestamp` (the hour), `field` (the dotted path), `text`, `json` and `n` (src/sources/typed-hourly.ts).
   * A chart counted per value of one declared field may read it for the window's whole hours.
   */
  readonly hourly?: string;
  /**
   * The relation of the declared pairs' counts per (project, hour, pair, values) and the pairs
   * (the source's `typedPairs`; columns `timestamp`, `field`, `text`, `json`, `text2`, `json2`, `n`:
   * src/sources/typed-hourly.ts): a count grouped by a pair may read it for the window's whole hours.
   */
  readonly pairs?: { readonly relation: string; readonly fields: ReadonlyArray<readonly [string, string]> };
}
