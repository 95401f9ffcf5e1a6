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
}
