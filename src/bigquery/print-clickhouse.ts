import type { QueryIR } from './ir';
import { refuse } from './refuse';

/** Table name -> the FROM item ClickHouse reads it by (a subquery over the source's table, bound to the request). */
export type ClickHouseTables = Readonly<Record<string, string>>;

/**
 * The translated query as ClickHouse SQL.
 *
 * @example
 * printClickHouse(query, { edge_logs: '(SELECT ...)' });
 */
export function printClickHouse(query: QueryIR, tables: ClickHouseTables): string {
  void query;
  void tables;
  return refuse('construct', 'The ClickHouse printing is not there yet.');
}
