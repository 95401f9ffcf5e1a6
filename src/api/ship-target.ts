import { DEFAULT_COMPACTION_DUCKDB } from '../duckdb/compaction-duckdb';
import type { ShipTarget } from '../managed/clickhouse-shipper';
import type { ShipTo } from '../managed/managed-storage';
import type { ClickHouseShipping, StorageOptions } from '../managed/storage-options';
import type { SourceSet } from '../sources/source-set';

/**
 * `storage.clickhouse` as the target managed storage ships to: the application's own loader (it
 * closes it), or one made here from where the tables are, closed with the storage. The ClickHouse
 * code is loaded only then: instances without ClickHouse never load it.
 *
 * @example
 * await managed.start(options, await shipTargetOf(options.storage, sources));
 */
export async function shipTargetOf(storage: StorageOptions, sources: SourceSet): Promise<ShipTo | undefined> {
  const config = storage.clickhouse;
  if (!config) return undefined;
  if (typeof (config as ShipTarget).insertAt === 'function') return { target: config as ShipTarget, close: async () => undefined };
  const { clickhouseLoader } = await import('../engine/clickhouse/clickhouse-loader');
  const { batchRows, duckdb, ...server } = config as ClickHouseShipping;
  // The instance's own sources: the loader maps each to its table.
  const loader = clickhouseLoader({ ...server, batchRows, duckdb: duckdb ?? storage.compactionDuckdb ?? DEFAULT_COMPACTION_DUCKDB, sourceDefinitions: sources.list });
  return { target: loader, close: () => loader.close() };
}
