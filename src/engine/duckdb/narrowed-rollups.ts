import { VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { sqlStringList } from '../../duckdb/sql-literal';
import type { ReadSet } from '../../files/source-reader';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import type { SourceFiles } from '../../duckdb/source-relations';
import type { EngineParam } from '../engine';

// A stored rollup with `narrowedBy` (the gateway's trigram maps) narrowed to the rows a statement's
// text keeps: computed once per stored file version and text, then bound in the files' place. A
// stored file never changes under its path, size and CRC-32 as its commit records them (and the
// snapshot checked them); a file rewritten under the same path is another version, never served
// from an older one's keys.

/** One stored file's narrowing: its `column` values that may hold a text. */
export type ComputeKeys = (sql: string, rollup: string, companion: string, text: string) => Promise<readonly string[]>;

/** The parameter a narrowed rollup's kept values are bound as (no statement's own name: `le_` is the engine's). */
export const keysParam = (rollup: string) => `le_kept_${rollup}`;

/** Kept narrowings at most, and kept values in all: past either, every one is dropped. */
const MAX_ENTRIES = 4096;
const MAX_VALUES = 200_000;

/**
 * The narrowings an engine keeps, by rollup, stored file version and text.
 *
 * @example
 * const narrowed = new NarrowedRollups();
 * const { files, lists } = await narrowed.apply(edgeLogs, ['edge_logs_url_grams'], read, readFiles, query.params, (sql, rollup, path, text) => keysIn(connection, sql, rollup, path, text));
 */
export class NarrowedRollups {
  private readonly kept = new Map<string, readonly string[]>();
  private values = 0;

  /**
   * The source's files with each narrowable rollup the statement reads standing as its kept values
   * (`SourceFiles.stored[name].keys`), and those values by parameter name; as they were where a
   * rollup has no `narrowedBy`, the text is not bound as text, or a stored file's commit recorded
   * no CRC-32 (its version then is not known for sure).
   */
  async apply(
    source: SourceDescriptor,
    rollups: readonly string[],
    read: ReadSet,
    files: SourceFiles,
    params: Readonly<Record<string, EngineParam>>,
    compute: ComputeKeys,
  ): Promise<{ files: SourceFiles; lists: Record<string, readonly string[]> }> {
    const lists: Record<string, readonly string[]> = {};
    let stored = files.stored;
    for (const name of rollups) {
      const narrowedBy = source.rollups[name]?.narrowedBy;
      const text = narrowedBy === undefined ? undefined : params[narrowedBy.param];
      const entry = stored?.[name];
      if (narrowedBy === undefined || typeof text !== 'string' || !entry?.companions.length) continue;
      const covered = new Set(entry.dataFiles);
      const versions = read.parquet.filter((f) => covered.has(f.path)).map((f) => f.rollups?.[name]);
      if (versions.length !== entry.companions.length || versions.some((v) => v?.crc32 === undefined)) continue;
      const values = new Set<string>();
      for (const v of versions) for (const value of await this.keysOf(narrowedBy.sql, name, v!, text, compute)) values.add(value);
      const param = keysParam(name);
      lists[param] = [...values];
      stored = { ...stored, [name]: { ...entry, keys: { param, column: narrowedBy.column } } };
    }
    return { files: stored === files.stored ? files : { ...files, stored }, lists };
  }

  /** One stored file version's values for a text: kept, or computed and kept. */
  private async keysOf(sql: string, rollup: string, file: { path: string; bytes: number; crc32?: number }, text: string, compute: ComputeKeys): Promise<readonly string[]> {
    // The version as its commit records it: a file rewritten under the same path is another key.
    const key = `${rollup}\0${file.path}\0${file.bytes}\0${file.crc32}\0${text}`;
    const known = this.kept.get(key);
    if (known !== undefined) return known;
    const values = await compute(sql, rollup, file.path, text);
    // Bounded: compaction replaces files and callers send any text.
    if (this.kept.size >= MAX_ENTRIES || this.values + values.length > MAX_VALUES) {
      this.kept.clear();
      this.values = 0;
    }
    this.kept.set(key, values);
    this.values += values.length;
    return values;
  }
}

/**
 * One stored file's narrowing by DuckDB: the rollup's `narrowedBy.sql` over the file, `$text` bound.
 *
 * @example
 * await keysIn(connection, edgeLogs.rollups.edge_logs_url_grams.narrowedBy.sql, 'edge_logs_url_grams', '/data/_rollups/.../part-0.parquet', 'abcdefghijklmnopqrst');
 */
export async function keysIn(connection: DuckDBConnection, sql: string, rollup: string, companion: string, text: string): Promise<readonly string[]> {
  const reader = await connection.runAndReadAll(`WITH ${rollup} AS (SELECT * FROM read_parquet(${sqlStringList([companion])}))\n${sql}`, { text }, { text: VARCHAR });
  return reader.getRows().map((row) => String(row[0]));
}
