import { join } from 'node:path';
import type { ParquetCompression, SourceDescriptor } from '../sources/source-descriptor';
import { declaredColumns, sourceRelation, type SourceFiles } from './source-relations';
import { sqlString, sqlStringList } from './sql-literal';
import { withTypedColumns } from './typed-columns';
import { ARRAYS_COLUMN } from '../sources/typed-fields';
import { columnName } from '../sql/column-name';

/**
 * The Parquet key-value metadata key under which each data file records the commit it was
 * written for (read back by dataset/dataset-orphans.ts when a commit is lost).
 */
export const PROVENANCE_KEY = 'log_endpoints_commit';

/**
 * The layout facts of a source, from its descriptor (src/sources/): the column files are sorted
 * by first (so a project's rows sit in few row groups), rows per row group, dictionary entries
 * per column chunk before DuckDB falls back to plain encoding, and the files' codec (zstd unless
 * the descriptor says `parquet.compression`). The built-ins' numbers were chosen by measurement;
 * their descriptors say why.
 */
export function parquetLayoutOf(d: SourceDescriptor): { projectColumn: string; rowGroupRows: number; dictionaryEntries?: number; compression: ParquetCompression } {
  return {
    projectColumn: d.projectColumn,
    rowGroupRows: d.parquet.rowGroupRows,
    ...(d.parquet.dictionaryEntries ? { dictionaryEntries: d.parquet.dictionaryEntries } : {}),
    compression: d.parquet.compression ?? 'zstd',
  };
}

/** What a write in the fast Parquet layout reads, keeps and writes (`parquetLayoutCopy`). */
export interface LayoutCopyOptions {
  source: SourceDescriptor;
  /** NDJSON files to read, or the source files (NDJSON and Parquet, with the Parquet schema), or a SELECT of the source's relation (staged-rows.ts). */
  ndjson?: readonly string[];
  files?: SourceFiles;
  relation?: string;
  target: string;
  where: string;
  /**
   * One folder per UTC day (`date=YYYY-MM-DD/`), each file named by `filenamePattern` (`{i}`: its
   * number in the folder, from 0). With `day`, every row written is of that day: the one file is
   * written straight to `dayFilePath`, not through DuckDB's partitioned writer, which holds every
   * row of a partition it is given (up to `partitioned_write_flush_threshold`, 524,288 rows) before
   * it writes them (10 MiB of the write of an 8 MiB gateway segment; docs/performance.md, "A run of
   * one day written as one file"). The folder must exist (`dayFilePath`'s).
   */
  partitionByDay?: { filenamePattern: string; day?: string };
  /** Text every file written carries in its key-value metadata under PROVENANCE_KEY (see dataset-orphans.ts). */
  provenance?: string;
  /**
   * Whether the files get the source's typed columns (typed-columns.ts) beside `metadata` (default
   * not: the layout of JSON alone). Whoever commits the files records it (`typedFieldsWritten`).
   */
  typedColumns?: boolean;
  /** How many rows the COPY writes at most, when known: the dictionaries are sized to it (see `dictionaryLimit`). */
  rows?: number;
  /**
   * The bytes a row of the input takes in Parquet uncompressed, when known (`parquetRowBytes`):
   * wide rows get row groups of fewer rows than the descriptor's (`rowGroupRowsOf`).
   */
  rowBytes?: number;
  /**
   * The most rows a row group of the COPY can hold, when the writer's shape bounds it
   * (`oneThreadGroupRows`): the dictionaries are sized to it (see `dictionaryLimit`). Default:
   * twice `rowGroupRows`, what any write stays under.
   */
  groupRows?: number;
  /**
   * A table `sortedLayoutTableSql` filled with these options: its rows are copied in their order,
   * not read and sorted again (the heads are taken from the same table: sorted-layout-write.ts).
   */
  sortedTable?: string;
  /**
   * Files already in the layout's order, one after the other (a merge's sorted slices,
   * `sortedSliceCopy`): their rows are copied in that order, not sorted again.
   */
  sortedFiles?: readonly string[];
}

/**
 * The one definition of the fast Parquet layout, shared by `compact` and the generator: the
 * source relation itself (timestamp as TIMESTAMP, metadata whole as JSON, the used fields flat),
 * sorted by project, newest first, then id (the same input gives the same bytes), zstd (or the
 * descriptor's `parquet.compression`), row groups of the descriptor's size, optionally one folder per UTC day (`date=YYYY-MM-DD/`).
 *
 * `where` picks the rows to keep: a broken NDJSON line reads as a row of NULLs.
 */
export function parquetLayoutCopy(options: LayoutCopyOptions): string {
  const layout = parquetLayoutOf(options.source);
  const groupRows = rowGroupRowsOf(options.source, options.rowBytes);
  const dictionary = dictionaryLimit(layout.dictionaryEntries, groupRows, options.rows, options.groupRows);
  const part = options.partitionByDay;
  // A day's rows written as one file, the day its folder's name and not a column (as a partitioned write leaves it out).
  const dayFile = part?.day === undefined ? null : dayFilePath(options.target, { filenamePattern: part.filenamePattern, day: part.day });
  // The rows are sorted with their declared columns only, and the typed columns computed from the
  // sorted rows as they stream to the file: carried through the sort (or computed before it) they
  // took compaction past its share of the memory budget (62MB, 8 MiB gateway segments).
  const sorted =
    options.sortedTable !== undefined
      ? `SELECT * FROM ${options.sortedTable}`
      : options.sortedFiles !== undefined
        ? `SELECT * FROM read_parquet(${sqlStringList(options.sortedFiles)})`
        : layoutRowsSql(options);
  const rows = dayFile === null ? sorted : `SELECT * EXCLUDE (date) FROM (${sorted})`;
  return `
    COPY (
      ${options.typedColumns ? withTypedColumns(options.source, rows) : rows}
    ) TO ${sqlString(dayFile ?? options.target)} (
      FORMAT parquet, ${codecOptions(layout.compression)}, ROW_GROUP_SIZE ${groupRows}, STRING_DICTIONARY_PAGE_SIZE_LIMIT ${stringDictionaryBytes(options.source)}${dictionary ? `, DICTIONARY_SIZE_LIMIT ${dictionary}` : ''}${
        part && dayFile === null ? `, PARTITION_BY (date), FILENAME_PATTERN ${sqlString(part.filenamePattern)}, OVERWRITE_OR_IGNORE true` : ''
      }${options.provenance === undefined ? '' : `, KV_METADATA {${PROVENANCE_KEY}: ${sqlString(options.provenance)}}`}
    )`;
}

/**
 * The zstd level of the data files (DuckDB's default is 3). Why 1: the data file's COPY is most of
 * compaction's CPU, for a run and for every merge of a day's files, and at level 1 its zstd work
 * is cheaper for files of about the same bytes. Measured on 200,000 gateway events of the seed
 * bench's default scale, one thread: 2.76 -> 2.21 µs of CPU an event for the COPY, 17,584,560 ->
 * 17,571,917 bytes (docs/performance.md, "Compaction's CPU per event"). zstd decodes at about the
 * same speed whatever the level; files already written keep theirs.
 */
export const DATA_ZSTD_LEVEL = 1;

/**
 * The COPY options of a data file's codec: zstd at DATA_ZSTD_LEVEL, or the descriptor's lz4
 * (written as Parquet's LZ4_RAW).
 *
 * @example
 * codecOptions('zstd'); // 'COMPRESSION zstd, COMPRESSION_LEVEL 1'
 */
export function codecOptions(compression: ParquetCompression): string {
  return compression === 'zstd' ? `COMPRESSION zstd, COMPRESSION_LEVEL ${DATA_ZSTD_LEVEL}` : `COMPRESSION ${compression}`;
}

/**
 * The file a write of one day's rows goes to under `target` (`partitionByDay` with `day`): where
 * DuckDB's partitioned writer puts the first file of that day, `date=<day>/<pattern, {i} = 0>.parquet`.
 *
 * @example
 * dayFilePath('staging/out', { filenamePattern: 'part-1f-{i}', day: '2026-11-30' }); // 'staging/out/date=2026-11-30/part-1f-0.parquet'
 */
export function dayFilePath(target: string, partition: { filenamePattern: string; day: string }): string {
  return join(target, `date=${partition.day}`, `${partition.filenamePattern.replaceAll('{i}', '0')}.parquet`);
}

/**
 * The temporary table a write sorts its rows into once, in the layout's order (declared columns,
 * and `date` when the files are partitioned by day): `parquetLayoutCopy({ sortedTable })` copies
 * it in that order and the heads are taken from it (sorted-layout-write.ts), instead of the file just
 * written being decoded again for its head (35-128 ms of a run of an 8 MiB gateway segment).
 * DuckDB keeps a table's insertion order. Measured: the table needs less memory than the sort
 * feeding the COPY did (the write of an 8 MiB gateway segment fits 45MB this way, 50MB the other;
 * a day's merge of 70,000 gateway events fits compaction's 80MB this way and not the other).
 *
 * @example
 * await connection.run(sortedLayoutTableSql({ source, relation, target: out, where: 'timestamp IS NOT NULL' }, 'le_sorted_rows'));
 * await connection.run(parquetLayoutCopy({ source, target: out, where: 'true', sortedTable: 'le_sorted_rows' }));
 */
export function sortedLayoutTableSql(options: Omit<LayoutCopyOptions, 'sortedTable'>, table: string): string {
  return `CREATE OR REPLACE TEMPORARY TABLE ${table} AS ${layoutRowsSql(options)}`;
}

/**
 * Writes the layout's rows that `slice` (a SQL condition) selects, sorted, to `target`: one
 * slice of a merge (merge-slices.ts), its declared columns only (and `date` when partitioned by
 * day), as the sorted table holds them; `parquetLayoutCopy({ sortedFiles })` then copies the
 * slices in order. Compressed with LZ4: a staging file, read once right after.
 *
 * @example
 * await connection.run(sortedSliceCopy({ source, files, target: out, where: 'true' }, `"project" = 'a'`, 'staging/slice-0.parquet'));
 */
export function sortedSliceCopy(options: Omit<LayoutCopyOptions, 'sortedTable' | 'sortedFiles'>, slice: string, target: string): string {
  const layout = parquetLayoutOf(options.source);
  const groupRows = rowGroupRowsOf(options.source, options.rowBytes);
  const dictionary = dictionaryLimit(layout.dictionaryEntries, groupRows, options.rows, options.groupRows);
  return `
    COPY (${layoutRowsSql({ ...options, where: `(${options.where}) AND (${slice})` })})
    TO ${sqlString(target)} (FORMAT parquet, COMPRESSION lz4, ROW_GROUP_SIZE ${groupRows}, STRING_DICTIONARY_PAGE_SIZE_LIMIT ${STRING_DICTIONARY_BYTES}${dictionary ? `, DICTIONARY_SIZE_LIMIT ${dictionary}` : ''})`;
}

/** The layout's rows in its order: the declared columns (and `date` when partitioned by day), sorted. */
function layoutRowsSql(options: Omit<LayoutCopyOptions, 'sortedTable'>): string {
  const relation = options.relation ?? sourceRelation(options.source, options.files ?? { ndjson: [...(options.ndjson ?? [])], parquet: [], parquetTypes: new Map() });
  const day = options.partitionByDay;
  return `SELECT ${declaredColumns(options.source)
    .map(([name]) => name)
    .join(', ')}${day ? ", strftime(timestamp, '%Y-%m-%d') AS date" : ''}
      FROM (${relation})
      WHERE ${options.where}
      ORDER BY ${day ? 'date, ' : ''}${parquetLayoutOf(options.source).projectColumn}, timestamp DESC, id`;
}

/**
 * The bytes of a string column chunk's dictionary before DuckDB gives up on it for plain encoding
 * (its STRING_DICTIONARY_PAGE_SIZE_LIMIT; DuckDB's default is 1 MB). Why: the writer fills a
 * column's dictionary up to this before it finds that the column has too many values to gain from
 * one (an id, a message, `metadata`, and each typed field's JSON text of a varied field), so every
 * such column cost about a megabyte in every COPY; with a source's typed fields stored as two
 * columns each, an 8 MiB write-ahead segment of the gateway log with 14 typed fields took more than
 * compaction's 80 MB and every run was done twice (measured: 75.5 of 76.2 MiB used, then done at
 * twice the limit). At 64 KiB it fits, runs in about the same time and the file is smaller
 * (410,700 against 456,747 bytes); a field a dashboard filters or groups by (few values) keeps its
 * dictionary, which holds 2,000 values of 32 bytes within 64 KiB.
 */
export const STRING_DICTIONARY_BYTES = 64 * 1024;

/** What an id takes in a string dictionary: a UUID's 36 characters and DuckDB's 4-byte length. */
export const ID_DICTIONARY_BYTES = 40;

/**
 * The STRING_DICTIONARY_PAGE_SIZE_LIMIT of a source's COPY: STRING_DICTIONARY_BYTES, or for a
 * source with `parquet.idBloomFilter` enough for a row group's UUID ids (320 KiB at 8,192 rows).
 * Why: DuckDB writes a column chunk's bloom filter only when it wrote the chunk with a dictionary,
 * and ids are all distinct, so `id` gets one only when its whole row group fits the dictionary;
 * with it, a log asked by id (Studio's single log, no time range) reads the one row group whose
 * filter may hold the id instead of every group's ids (their min and max span every group). The
 * limit is the COPY's, not the column's: every string column may fill that much before plain
 * encoding (10 MB more of compaction's memory at most, measured: `ID_BLOOM_FILTER_MAX_ROWS`). A
 * group of longer ids (a sender's own) is written plain, without a filter, and read whole as before.
 *
 * @example
 * stringDictionaryBytes(edgeLogs); // 327680
 * stringDictionaryBytes(postgresLogs); // 65536
 */
export function stringDictionaryBytes(source: SourceDescriptor): number {
  return source.parquet.idBloomFilter ? Math.max(STRING_DICTIONARY_BYTES, source.parquet.rowGroupRows * ID_DICTIONARY_BYTES) : STRING_DICTIONARY_BYTES;
}

/**
 * The DICTIONARY_SIZE_LIMIT of a COPY: the source's entries, or fewer when no column chunk can hold
 * that many values: a chunk is one row group's column, and DuckDB flushes a row group once it
 * reaches `rowGroupRows` (a parallel write combines smaller ones, and a partitioned one hands it
 * partial vectors), so it holds fewer than twice that; at most `groupRows` when the caller knows
 * better (`oneThreadGroupRows`); and never more than the rows written. Why: DuckDB's Parquet writer
 * allocates each column's dictionary for the whole limit before the first row (6 MiB a column at
 * 100,000 entries, about 0.5 MiB at 8,192), so compacting a 2 MiB write-ahead segment of the
 * gateway log took 65 MiB in its COPY, and merging a day's files as much again, the process's
 * highest peaks under ingest; twice a group's rows instead of one cost the write of an 8 MiB
 * gateway segment 8 MiB more. The files are the same bytes.
 *
 * @example
 * dictionaryLimit(100_000, 8_192, 3_900); // 3900
 * dictionaryLimit(100_000, 8_192); // 16384
 * dictionaryLimit(100_000, 8_192, 12_900, 8_192); // 8192
 */
export function dictionaryLimit(entries: number | undefined, rowGroupRows: number, rows?: number, groupRows = 2 * rowGroupRows): number | undefined {
  if (entries === undefined) return undefined;
  return Math.max(1, Math.min(entries, groupRows, rows === undefined ? Infinity : Math.ceil(rows)));
}

/** The rows of one of DuckDB's vectors (its STANDARD_VECTOR_SIZE): the most a chunk of rows holds. */
const VECTOR_ROWS = 2048;

/**
 * The most bytes of rows, as Parquet counts them uncompressed (`parquetRowBytes`), a row group of
 * a data file holds. Why: DuckDB's Parquet writer holds a whole row group in memory before it
 * writes it, at about 2.3 times those bytes, so the descriptor's rows alone did not bound a write:
 * a merge of Auth's log (637 bytes a row) in the default 100,000-row groups took 147 - 160 MiB
 * more, and set the server's peak under ingest (docs/performance.md, "Row groups bounded in
 * bytes"). At 12 MiB the gateway's and Postgres's declared groups are unchanged (8,192 rows of
 * 426 bytes, 32,768 of 368); Auth's get 18,432 rows of 100,000, and Storage's, PgBouncer's and
 * the functions' 45,056 - 63,488.
 */
export const ROW_GROUP_BYTES = 12 * 1024 * 1024;

/**
 * The rows of a row group of a write whose input rows take `rowBytes` each (uncompressed
 * Parquet): the descriptor's `parquet.rowGroupRows`, or fewer, in whole vectors (at least one),
 * so a group holds at most ROW_GROUP_BYTES. Unknown widths keep the descriptor's.
 *
 * @example
 * rowGroupRowsOf(authLogs, 637); // 18432
 * rowGroupRowsOf(edgeLogs, 426); // 8192
 * rowGroupRowsOf(authLogs); // 100000
 */
export function rowGroupRowsOf(source: SourceDescriptor, rowBytes?: number): number {
  const declared = source.parquet.rowGroupRows;
  if (rowBytes === undefined || !(rowBytes > 0)) return declared;
  const fit = Math.floor(ROW_GROUP_BYTES / rowBytes / VECTOR_ROWS) * VECTOR_ROWS;
  return Math.min(declared, Math.max(VECTOR_ROWS, fit));
}

/**
 * The most rows a row group holds when one thread writes one file (no partitions): DuckDB's writer
 * flushes a group at the first chunk that brings it to `rowGroupRows`, and a chunk holds at most a
 * vector. A table is scanned in whole vectors, so from one a group holds `rowGroupRows` rounded up
 * to whole vectors; files are read in chunks that may end where a file does, so from them up to a
 * vector less one more (a merge's file from its sorted slices had a group of 10,108 rows at 8,192).
 *
 * @example
 * oneThreadGroupRows(8_192, 'table'); // 8192
 * oneThreadGroupRows(20_000, 'table'); // 20480
 * oneThreadGroupRows(8_192, 'files'); // 10239
 */
export function oneThreadGroupRows(rowGroupRows: number, from: 'table' | 'files'): number {
  return from === 'table' ? Math.ceil(rowGroupRows / VECTOR_ROWS) * VECTOR_ROWS : rowGroupRows + VECTOR_ROWS - 1;
}

/**
 * What a commit records of a data file written by `parquetLayoutCopy` with `typedColumns`: the
 * typed fields it holds (src/dataset/dataset-log.ts, `DataFile.typedFields`), or nothing.
 *
 * @example
 * Object.assign(entry, typedFieldsWritten(postgresLogs, true)); // { typedFields: ['parsed.error_severity', ...] }
 */
export function typedFieldsWritten(source: SourceDescriptor, written: boolean): { typedFields?: string[] } {
  return written && source.typedFields.length ? { typedFields: [...source.typedFields] } : {};
}

/**
 * The column a writer adds to its count of a written file's rows (`SELECT count(*) ...`) to learn
 * whether any row has the arrays flag true, for `arraysFreeWritten`: nothing for a file without
 * the flag. One aggregate more in a scan the writer makes anyway; cheaper than the file's footer
 * (docs/performance.md, "The arrays flag recorded when a file is written").
 *
 * @example
 * `SELECT count(*) AS n${arraysAggregate(edgeLogs, true)} FROM read_parquet('part-0.parquet')`; // ..., bool_or("arrays:metadata") AS arrays ...
 */
export function arraysAggregate(source: SourceDescriptor, written: boolean): string {
  return typedFieldsWritten(source, written).typedFields ? `, bool_or(${columnName(ARRAYS_COLUMN)}) AS arrays` : '';
}

/**
 * What a commit records of a data file's arrays flag (src/dataset/dataset-log.ts,
 * `DataFile.arraysFree`), from the `arrays` column `arraysAggregate` added to the writer's count:
 * whether no row has it true (false or NULL), for a file written with typed columns; nothing for
 * the others, nor for a file the count did not see (`undefined`): a reader then asks its footer.
 *
 * @example
 * Object.assign(entry, arraysFreeWritten(edgeLogs, true, row.arrays)); // { arraysFree: true } when row.arrays is false or NULL
 */
export function arraysFreeWritten(source: SourceDescriptor, written: boolean, arrays: unknown): { arraysFree?: boolean } {
  return typedFieldsWritten(source, written).typedFields && arrays !== undefined ? { arraysFree: arrays !== true } : {};
}

/** Rows that hold an event: a broken line has none of these. */
export const IS_EVENT = 'id IS NOT NULL OR timestamp IS NOT NULL OR event_message IS NOT NULL OR metadata IS NOT NULL';
