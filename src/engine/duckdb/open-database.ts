import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { InvalidOptionError } from '../../errors';
import { TIMESTAMP_MACRO } from './source-relations';

export interface DatabaseSettings {
  /** DuckDB worker threads (default: DuckDB's own choice, the number of cores). */
  threads?: number;
  /** DuckDB memory limit, e.g. '512MB' (default: DuckDB's, 80% of RAM). */
  memoryLimit?: string;
}

/** A memory size DuckDB accepts: a number and a unit (`256MB`, `1.5GB`, `512MiB`; MB = 10^6 bytes). */
export const MEMORY_LIMIT_PATTERN = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/** The smallest memory limit accepted: below it DuckDB cannot even set up a connection. */
export const MIN_MEMORY_LIMIT_BYTES = 1e6;

const UNIT_BYTES: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** Bytes of a memory limit as DuckDB reads it (`256MB` = 256 × 10^6), or null when it is not a size. */
export function memoryLimitBytes(text: string): number | null {
  const m = MEMORY_LIMIT_PATTERN.exec(text.trim());
  return m ? Number(text.trim().slice(0, text.trim().length - m[2]!.length).trim()) * UNIT_BYTES[m[2]!.toLowerCase()]! : null;
}

/**
 * An in-memory DuckDB set up the one way every part of the library uses it: offline, UTC, and
 * with the macros the source relations need.
 */
export async function openDatabase(settings: DatabaseSettings = {}): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const config: Record<string, string> = {
    // Offline by design: json and parquet are built in, nothing is ever downloaded.
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  };
  if (settings.threads !== undefined) config.threads = String(settings.threads);
  if (settings.memoryLimit !== undefined) config.memory_limit = settings.memoryLimit;
  let instance: DuckDBInstance | undefined;
  try {
    instance = await DuckDBInstance.create(':memory:', config);
    const connection = await instance.connect();
    // Offsets in timestamps are applied, and TIMESTAMPTZ becomes UTC wall time, whatever the host says.
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run(TIMESTAMP_MACRO);
    // Parquet footers are read once per file version, not once per query.
    await connection.run('SET parquet_metadata_cache = true');
    return { instance, connection };
  } catch (error) {
    // Nothing but the settings varies here: a failure means DuckDB cannot run with them (a memory
    // limit too small to set up a connection, threads it refuses).
    instance?.closeSync();
    const first = String((error as Error)?.message ?? error).split('\n')[0];
    throw new InvalidOptionError('duckdb', `DuckDB refused its settings (threads ${settings.threads ?? 'default'}, memoryLimit ${settings.memoryLimit ?? 'default'}): ${first}`, { cause: error });
  }
}
