import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { StorageOptions } from '../managed/storage-options';
import type { SourceSet } from '../sources/source-set';
import { describeValue } from '../util/option-checks';
import type { ConfigFile } from './config-file';
import { definedOnly } from './defined-only';
import { dataDirOf, integerOf, typedColumnsOf } from './parse-options';
import { UsageError } from './usage-error';

/*
 * The one rule by which a `--config` module and the command line combine (docs/cli.md, "--config
 * and flags"): lists add up (keys, a source's globs), and every other option is set in one place,
 * or in both to the same value; a flag and the config setting one option to different values is a
 * usage error naming both. Objects (storage, duckdb, limits) combine option by option, so nothing
 * of either is dropped.
 */

/**
 * An option's value from a flag and from the config: the one given, or the value both give; a
 * usage error when they differ.
 *
 * @example
 * agreed('serve', 'threads', 2, 'duckdb.threads', 4); // throws: --threads 2 and the config's duckdb.threads: 4 disagree
 */
export function agreed<T>(command: string, flag: string, fromFlag: T | undefined, option: string, fromConfig: T | undefined, same: (a: T, b: T) => boolean = isDeepStrictEqual): T | undefined {
  if (fromFlag === undefined) return fromConfig;
  if (fromConfig === undefined || same(fromFlag, fromConfig)) return fromFlag;
  // A flag as typed (`--threads 2`, `--no-cache`), the config's value as written there.
  const typed = typeof fromFlag === 'string' || typeof fromFlag === 'number' ? ` ${shown(fromFlag)}` : '';
  throw new UsageError(`--${flag}${typed} and the config's ${option}: ${shown(fromConfig)} disagree: set it in one place, or to the same value in both.`, command);
}

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : describeValue(value);
}

/** Two data dirs are one when they resolve to the same folder (`./data` and `data`). */
function samePath(a: string, b: string): boolean {
  return resolve(a) === resolve(b);
}

/** The flags of managed storage: `--data-dir`, the write-ahead log's bounds and the layout compaction writes. */
export interface StorageFlags {
  'data-dir'?: string;
  'wal-segment-bytes'?: string;
  'wal-segment-age-ms'?: string;
  'no-typed-columns'?: boolean;
}

/**
 * Managed storage from `--data-dir` (and the WAL flags) and the config's `storage`, combined by
 * the rule: either alone, or both (the data dir then the same folder); every other option of the
 * config's `storage` (retention, source names, bounds...) kept. Undefined when neither asks for it;
 * the WAL flags without a data dir anywhere are a usage error.
 */
export function combinedStorage(command: string, values: StorageFlags, config: ConfigFile['storage']): StorageOptions | undefined {
  const fromConfig = config as Partial<StorageOptions> | undefined;
  if (values['data-dir'] === undefined && fromConfig === undefined) {
    for (const flag of ['wal-segment-bytes', 'wal-segment-age-ms'] as const) {
      if (values[flag] !== undefined) throw new UsageError(`--${flag} is for ingest: add --data-dir <dir> (or storage in the --config).`, command);
    }
    if (values['no-typed-columns']) throw new UsageError('--no-typed-columns is for the files compacted from ingested events: add --data-dir <dir> (or storage in the --config).', command);
    return undefined;
  }
  const bound = (flag: 'wal-segment-bytes' | 'wal-segment-age-ms') => (values[flag] === undefined ? undefined : integerOf(command, flag, values[flag], 0, 1));
  const dataDir = agreed(command, 'data-dir', values['data-dir'], 'storage.dataDir', fromConfig?.dataDir, samePath);
  return {
    ...fromConfig,
    ...definedOnly({
      // Created here when the flag gives it (a path that cannot be one is told as the flag's).
      dataDir: values['data-dir'] !== undefined ? dataDirOf(command, values['data-dir']) : dataDir,
      maxSegmentBytes: agreed(command, 'wal-segment-bytes', bound('wal-segment-bytes'), 'storage.maxSegmentBytes', fromConfig?.maxSegmentBytes),
      maxSegmentAgeMs: agreed(command, 'wal-segment-age-ms', bound('wal-segment-age-ms'), 'storage.maxSegmentAgeMs', fromConfig?.maxSegmentAgeMs),
      typedColumns: agreed(command, 'no-typed-columns', typedColumnsOf(values), 'storage.typedColumns', fromConfig?.typedColumns),
    }),
  } as StorageOptions;
}

/**
 * The globs of each source: the config's `sources` and the command line's (`--source <source>=<glob>`,
 * the descriptors' flags) add up, each glob once. A source given nowhere is absent.
 */
export function combinedGlobs(fromFlags: ReadonlyMap<string, readonly string[]>, config: ConfigFile['sources'], sources: SourceSet): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const [name, globs] of Object.entries(config ?? {})) {
    if (globs !== undefined) out[name] = typeof globs === 'string' ? [globs] : [...globs];
  }
  for (const name of sources.names) {
    const given = fromFlags.get(name);
    if (given?.length) out[name] = [...new Set([...(out[name] ?? []), ...given])];
  }
  return out;
}

/**
 * The options every command that reads logs combines the same way: DuckDB's settings, the clock,
 * single-project mode and the cache (`--no-cache`, where the command has it).
 */
export function combinedOptions(
  command: string,
  values: { threads?: number; memoryLimit?: string; now?: () => Date; singleProject?: boolean; noCache?: boolean },
  config: ConfigFile,
): Pick<ConfigFile, 'duckdb' | 'memoryLimit' | 'now' | 'singleProject' | 'cache'> {
  const duckdb = definedOnly({
    threads: agreed(command, 'threads', values.threads, 'duckdb.threads', config.duckdb?.threads),
  });
  // The process's memory budget (DuckDB gets a share of it); the config's duckdb.memoryLimit, when
  // it gives one, stays DuckDB's own.
  const memoryLimit = agreed(command, 'memory-limit', values.memoryLimit, 'memoryLimit', config.memoryLimit);
  // A clock function cannot be compared: given in both places, they disagree.
  const now = agreed(command, 'now', values.now, 'now', config.now, () => false);
  const singleProject = agreed(command, 'single-project', values.singleProject || undefined, 'singleProject', config.singleProject);
  const cache = agreed(command, 'no-cache', values.noCache ? (false as const) : undefined, 'cache', config.cache, (a, b) => a === b);
  return {
    ...(config.duckdb || Object.keys(duckdb).length ? { duckdb: { ...config.duckdb, ...duckdb } } : {}),
    ...(memoryLimit !== undefined ? { memoryLimit } : {}),
    ...(now ? { now } : {}),
    ...(singleProject !== undefined ? { singleProject } : {}),
    ...(cache !== undefined ? { cache } : {}),
  };
}
