import { InvalidOptionError } from '../../errors';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import { localTableOf, sourcesOfTarget, tableOf, type ClickHouseTarget } from './options';
import { sqlClusterName, sqlIdentifier, sqlTableName } from './sql-text';
import { flatPathsColumn, flatValuesColumn } from '../../util/json-flat-paths';

/** How a column is written in RowBinary (see row-binary.ts). */
export type ColumnEncoding = 'int64' | 'uint64' | 'string' | 'nullable-string' | 'nullable-float64' | 'nullable-int32' | 'nullable-int64' | 'nullable-uint8' | 'string-array';

export interface ColumnSpec {
  name: string;
  /** ClickHouse type. */
  type: string;
  encoding: ColumnEncoding;
}

/** How each column type of a source descriptor is written in RowBinary. */
const ENCODINGS: Record<string, ColumnEncoding> = {
  'Nullable(String)': 'nullable-string',
  'Nullable(Float64)': 'nullable-float64',
  'Nullable(Int32)': 'nullable-int32',
  'Nullable(Int64)': 'nullable-int64',
  'Nullable(UInt8)': 'nullable-uint8',
};

/**
 * The columns of a source's table, from its descriptor (src/sources/): the relation's columns,
 * `metadata` whole (as the JSON text DuckDB reads from the log files). `timestamp` is
 * microseconds since the epoch in an Int64: exact to the microsecond on every version (18.16 has
 * no DateTime64). The project column is the first part of the sorting key, which cannot be
 * Nullable: a missing project is ''. Both come first.
 */
export function tableColumns(d: SourceDescriptor): readonly ColumnSpec[] {
  const rest = d.columns.filter((c) => c.name !== 'timestamp' && c.name !== d.projectColumn);
  return [
    { name: 'timestamp', type: 'Int64', encoding: 'int64' },
    { name: d.projectColumn, type: 'String', encoding: 'string' },
    ...rest.map((c) => ({ name: c.name, type: c.clickhouse, encoding: ENCODINGS[c.clickhouse] ?? 'nullable-string' })),
  ];
}

/**
 * Where an ingested row came from, for managed storage's shipper (clickhouse-shipper.ts): the
 * write-ahead segment (`_wal_segment`: data dir instance, source and segment number) and the byte
 * offset of the event's line in it (`_wal_offset`). Together they name one acknowledged event, so
 * a shipment retried after a crash inserts only the lines that are missing, and events that share
 * an `id` stay apart. Rows loaded from files keep the defaults ('' and 0). Queries never read them.
 */
export const POSITION_COLUMNS: readonly (ColumnSpec & { default: string })[] = [
  { name: '_wal_segment', type: 'String', encoding: 'string', default: "''" },
  { name: '_wal_offset', type: 'UInt64', encoding: 'uint64', default: '0' },
];

/**
 * Each JSON column of a source (`metadata`) flattened: `_<column>_paths` and `_<column>_values`,
 * every node's path and JSON text (src/util/json-flat-paths.ts), written by the loader. They let
 * a caller's BigQuery SQL read any field exactly on every ClickHouse version (18.16 has no JSON
 * parser: its `visitParam*` find a key anywhere, nested ones first). Rows loaded before a table
 * got them hold empty arrays (every field reads as missing) until loaded again.
 *
 * @example
 * flatJsonColumns(edgeLogs).map((c) => c.name); // ['_metadata_paths', '_metadata_values']
 */
export function flatJsonColumns(source: SourceDescriptor): ReadonlyArray<ColumnSpec & { of: string; default: string }> {
  return source.columns
    .filter((c) => c.type === 'json')
    .flatMap((c) => [
      { name: flatPathsColumn(c.name), type: 'Array(String)', encoding: 'string-array' as const, of: c.name, default: '[]' },
      { name: flatValuesColumn(c.name), type: 'Array(String)', encoding: 'string-array' as const, of: c.name, default: '[]' },
    ]);
}

/** The sorting key: one project's rows of one day lie together, in time order. */
function orderBy(source: SourceDescriptor): string {
  // A descriptor's column names are checked lower-case identifiers: written bare, as always.
  return `(${source.projectColumn}, timestamp)`;
}

/** One partition per UTC day, so a window reads only its days and old days drop whole. */
const PARTITION_BY = 'toDate(toDateTime(intDiv(timestamp, 1000000)))';

export interface SchemaOptions {
  /**
   * Run the DDL once with `ON CLUSTER` (needs ZooKeeper or ClickHouse Keeper on the cluster)
   * instead of on the one server connected to. Without it, run `init` against every server.
   */
  onCluster?: boolean;
}

/**
 * The DDL of the tables on one server (idempotent: IF NOT EXISTS). Without a cluster: one
 * MergeTree table per source (the built-ins and the target's `sourceDefinitions`). With one:
 * `<table>_local` MergeTree tables holding this server's shard, and `<table>` as a `Distributed`
 * table over the cluster's `<table>_local`s, sharding rows at random (even shards; every query
 * reads all of them).
 *
 * @example
 * schemaStatements({ database: 'logs', cluster: 'logs' }).forEach((sql) => console.log(`${sql};`));
 */
export function schemaStatements(target: Pick<ClickHouseTarget, 'database' | 'cluster' | 'tables' | 'sourceDefinitions'>, options: SchemaOptions = {}): string[] {
  const onCluster = options.onCluster ? ` ON CLUSTER ${requireCluster(target)}` : '';
  const statements = [`CREATE DATABASE IF NOT EXISTS ${sqlIdentifier(target.database, 'database')}${onCluster}`];
  for (const source of sourcesOfTarget(target).list) {
    const local = sqlTableName(target.database, localTableOf(target, source), `tables.${source.name}`);
    const columns = [
      ...tableColumns(source).map((c) => `  ${sqlIdentifier(c.name, 'sourceDefinitions')} ${c.type}`),
      ...flatJsonColumns(source).map((c) => `  ${sqlIdentifier(c.name, 'sourceDefinitions')} ${c.type} DEFAULT ${c.default}`),
      ...POSITION_COLUMNS.map((c) => `  ${sqlIdentifier(c.name, 'sourceDefinitions')} ${c.type} DEFAULT ${c.default}`),
    ].join(',\n');
    statements.push(`CREATE TABLE IF NOT EXISTS ${local}${onCluster} (\n${columns}\n)\n` + `ENGINE = MergeTree()\nPARTITION BY ${PARTITION_BY}\nORDER BY ${orderBy(source)}`);
    if (target.cluster) {
      const distributed = sqlTableName(target.database, tableOf(target, source), `tables.${source.name}`);
      const args = [sqlClusterName(target.cluster), `'${target.database}'`, `'${localTableOf(target, source)}'`, 'rand()'];
      statements.push(`CREATE TABLE IF NOT EXISTS ${distributed}${onCluster} AS ${local}\nENGINE = Distributed(${args.join(', ')})`);
    }
  }
  return statements;
}

/**
 * The ALTERs that add the columns a table made by an earlier version lacks: the position columns,
 * the flattened JSON columns, and columns a source descriptor gained since (ClickHouse 18 has no `ADD COLUMN IF NOT EXISTS`:
 * `present` is what `system.columns` lists). The rows already there get the defaults (NULL for
 * data columns). Empty when nothing is missing.
 *
 * @example
 * addMissingColumns({ database: 'logs' }, edgeLogs, 'edge_logs', new Set(['timestamp', 'project']));
 */
export function addMissingColumns(
  target: Pick<ClickHouseTarget, 'database' | 'cluster'>,
  source: SourceDescriptor,
  table: string,
  present: ReadonlySet<string>,
  options: SchemaOptions = {},
): string[] {
  const wanted = [...tableColumns(source).map((c) => ({ ...c, default: null as string | null })), ...flatJsonColumns(source), ...POSITION_COLUMNS];
  const missing = wanted.filter((c) => !present.has(c.name));
  if (missing.length === 0) return [];
  const onCluster = options.onCluster ? ` ON CLUSTER ${requireCluster(target)}` : '';
  const adds = missing.map((c) => `ADD COLUMN ${sqlIdentifier(c.name, 'sourceDefinitions')} ${c.type}${c.default === null ? '' : ` DEFAULT ${c.default}`}`).join(', ');
  return [`ALTER TABLE ${sqlTableName(target.database, table, `tables.${source.name}`)}${onCluster} ${adds}`];
}

function requireCluster(target: Pick<ClickHouseTarget, 'cluster'>): string {
  if (!target.cluster) throw new InvalidOptionError('cluster', 'onCluster needs a cluster name.');
  return sqlClusterName(target.cluster);
}
