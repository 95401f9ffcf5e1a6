import type { ClickHouseClient } from '@clickhouse/client';
import type { SourceName } from '../engine';
import { sourceDescriptor } from '../../sources/registry';

/** Table names per source; see `ClickHouseTarget.tables`. */
export type ClickHouseTables = Partial<Record<SourceName, string>>;

/**
 * Where the logs live in ClickHouse. Give `url` (and credentials), or a `client` you created
 * with `@clickhouse/client` (its own URL, credentials, TLS and keep-alive settings are used; it is
 * yours to close).
 */
export interface ClickHouseTarget extends ClickHouseServer {
  /** An existing `@clickhouse/client` client instead of `url`. */
  client?: ClickHouseClient;
}

/**
 * A `ClickHouseTarget` given by URL (no client object): what plain configuration holds, e.g.
 * managed storage's `storage.clickhouse`.
 */
export interface ClickHouseServer {
  /** HTTP(S) interface of one server, e.g. `http://127.0.0.1:8123`. */
  url?: string;
  /** User (default: `default`). */
  username?: string;
  password?: string;
  /** Database of the tables. */
  database: string;
  /**
   * A cluster of the server's `remote_servers`: the tables read and written are then
   * `Distributed` tables over `<table>_local` MergeTree tables on every shard.
   */
  cluster?: string;
  /** Table names (default `edge_logs` and `function_edge_logs`). */
  tables?: ClickHouseTables;
  /** Extra ClickHouse settings sent with every query, e.g. `{ max_threads: 8, max_memory_usage: 10e9 }`. */
  settings?: Readonly<Record<string, string | number>>;
}

/** The table queries read and inserts write, per source (the Distributed one on a cluster). */
export function tableOf(target: Pick<ClickHouseTarget, 'tables'>, source: SourceName): string {
  return target.tables?.[source] ?? sourceDescriptor(source).clickhouse.table;
}

/** The MergeTree table holding the rows on each server: `<table>_local` on a cluster. */
export function localTableOf(target: Pick<ClickHouseTarget, 'tables' | 'cluster'>, source: SourceName): string {
  const table = tableOf(target, source);
  return target.cluster ? `${table}_local` : table;
}
