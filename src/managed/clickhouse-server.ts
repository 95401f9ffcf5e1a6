import type { SourceName } from '../sources/source-descriptor';

/** Table names per source; see `ClickHouseTarget.tables`. */
export type ClickHouseTables = Partial<Record<SourceName, string>>;

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
