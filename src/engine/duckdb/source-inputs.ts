import type { DuckDBConnection } from '@duckdb/node-api';
import type { ListedFile } from '../../files/list-glob';
import type { FileRange, ReadSet } from '../../files/source-reader';
import { RangeCopies } from '../../files/range-copies';
import { LongLineCopies } from '../../files/long-line-copies';
import { parquetSchema } from '../../duckdb/parquet-schema';
import { arraysFreeFiles } from '../../duckdb/arrays-free-files';
import type { SourceFiles } from '../../duckdb/source-relations';

/** The SQL inputs of one source's read, with the copies made for it (copy path -> the range it holds). */
export type ReadFiles = SourceFiles & { copies: Map<string, FileRange> };

/**
 * A read's files as the engine's SQL reads them: whole files, copies of byte ranges and of files
 * holding a line too long for DuckDB, and the Parquet files' schema (kept per file set).
 *
 * @example
 * const files = await inputs.sourceFiles(connection, await reader.snapshot());
 */
export class SourceInputs {
  private readonly ranges = new RangeCopies();
  /** NDJSON file versions holding a line too long for DuckDB: read from a copy without such lines. */
  private readonly longLined = new Set<string>();
  private readonly longLines = new LongLineCopies();
  private readonly parquetTypes = new Map<string, ReadonlyMap<string, string>>();
  /** Per typed Parquet file version without a recorded flag: whether its arrays flag is never true (its footer, read once). */
  private readonly arraysFree = new Map<string, boolean>();

  /** The SQL inputs of a read: whole files, range copies, and the Parquet schema (kept per file set). */
  async sourceFiles(connection: DuckDBConnection, read: ReadSet): Promise<ReadFiles> {
    const copies = new Map<string, FileRange>();
    for (const range of read.ranges) {
      const copy = await this.ranges.copy(range);
      const key = versionKey(range.file);
      copies.set(this.longLined.has(key) ? await this.longLines.copy(copy, `${key}\0${copy}\0${range.start}\0${range.end}`) : copy, range);
    }
    const whole: string[] = [];
    for (const file of read.ndjson) {
      const key = versionKey(file);
      if (!this.longLined.has(key)) whole.push(file.path);
      else copies.set(await this.longLines.copy(file.path, key), { file, start: 0, end: file.size });
    }
    const ndjson = [...whole, ...copies.keys()];
    const parquet = read.parquet.map((f) => f.path);
    const parquetTypes = parquet.length ? await this.describeParquet(connection, read.parquet) : new Map<string, string>();
    const stored: Record<string, { companions: string[]; dataFiles: string[] }> = {};
    for (const file of read.parquet) {
      for (const [name, rollup] of Object.entries(file.rollups ?? {})) {
        const entry = (stored[name] ??= { companions: [], dataFiles: [] });
        entry.companions.push(rollup.path);
        entry.dataFiles.push(file.path);
      }
    }
    const typedFields = new Map(read.parquet.flatMap((f) => (f.typedFields ? [[f.path, f.typedFields] as const] : [])));
    const arraysFree = await this.arraysFreeOf(
      connection,
      read.parquet.filter((f) => f.typedFields?.length),
    );
    return { ndjson, parquet, parquetTypes, typedFields, arraysFree, copies, stored, ...(read.memory ? { memory: read.memory } : {}) };
  }

  /** Whether this version of a file is read from a copy without its lines too long for DuckDB. */
  isLongLined(file: ListedFile): boolean {
    return this.longLined.has(versionKey(file));
  }

  /** Reads this version of a file from a copy without its lines too long for DuckDB from now on. */
  markLongLined(file: ListedFile): void {
    this.longLined.add(versionKey(file));
  }

  /** Removes the copies. */
  close(): void {
    this.ranges.close();
    this.longLines.close();
  }

  /**
   * The typed files among `files` whose arrays flag is never true: as their commit records it
   * (`arraysFree`, known when the file was written), else by each file version's footer, read once.
   */
  private async arraysFreeOf(connection: DuckDBConnection, files: readonly ListedFile[]): Promise<Set<string>> {
    const unknown = files.filter((f) => f.arraysFree === undefined && !this.arraysFree.has(versionKey(f)));
    const free = unknown.length
      ? await arraysFreeFiles(
          connection,
          unknown.map((f) => f.path),
        )
      : new Set<string>();
    const answer = new Set(files.flatMap((f) => ((f.arraysFree ?? (free.has(f.path) || this.arraysFree.get(versionKey(f)))) ? [f.path] : [])));
    // Bounded: a long-running instance sees its files replaced by compaction.
    if (this.arraysFree.size + unknown.length > 4096) this.arraysFree.clear();
    for (const f of unknown) this.arraysFree.set(versionKey(f), free.has(f.path));
    return answer;
  }

  private async describeParquet(connection: DuckDBConnection, files: readonly ListedFile[]): Promise<ReadonlyMap<string, string>> {
    // Keyed by each file's version too: a file rewritten under the same name is described again.
    const key = files.map((f) => `${f.path}\0${f.size}\0${f.mtimeMs}`).join('\n');
    const known = this.parquetTypes.get(key);
    if (known) return known;
    const types = await parquetSchema(
      connection,
      files.map((f) => f.path),
    );
    if (this.parquetTypes.size >= 16) this.parquetTypes.clear();
    this.parquetTypes.set(key, types);
    return types;
  }
}

/** One version of a file: a file rewritten or grown is another. */
function versionKey(file: ListedFile): string {
  return `${file.path}\0${file.size}\0${file.mtimeMs}\0${file.ino}`;
}
