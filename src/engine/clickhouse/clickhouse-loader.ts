import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { SourceDescriptor, SourceName } from '../../sources/source-descriptor';
import type { SourceSet } from '../../sources/source-set';
import { MAX_ATTEMPTS, SourceReader, staleSnapshot, type ReadSet } from '../../files/source-reader';
import { RangeCopies } from '../../files/range-copies';
import { openDatabase, type DatabaseSettings } from '../../duckdb/open-database';
import { clickhouseErrorCode } from './classify-error';
import { connect, type Connection } from './connection';
import { localTableOf, requireDatabase, requireServer, sourcesOfTarget, tableOf, type ClickHouseTarget } from './options';
import { logFileSelect } from './read-log-files';
import { RowBinaryWriter } from './row-binary';
import { statementSql } from './query-files';
import { insertRowBinary, runCommand, runSql } from './run-sql';
import { addMissingColumns, flatJsonColumns, POSITION_COLUMNS, schemaStatements, tableColumns, type ColumnSpec, type SchemaOptions } from './schema';
import { flattenJson } from '../../util/json-flat-paths';
import { sqlIdentifier, sqlTableName } from './sql-text';
import type { SegmentRows } from '../../managed/clickhouse-shipper';
import { monotonicMs } from '../../time/clock';
import { EngineError } from '../../errors';

/** ClickHouse's code for a query whose id another running query has. */
const QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING = 216;

export type { SegmentRows };

/** Options of `clickhouseLoader`. */
export interface ClickHouseLoaderOptions extends ClickHouseTarget {
  /** The in-process DuckDB that reads the log files. */
  duckdb?: DatabaseSettings;
  /** Rows per INSERT (default 100 000). */
  batchRows?: number;
}

/** What loading one file did. */
export interface LoadedFile {
  file: string;
  /** Events inserted. */
  rows: number;
  /** Lines that are not events (broken JSON) or whose timestamp is unreadable. */
  skipped: number;
  /** Why the file could not be read (the other files are loaded all the same). */
  error?: string;
}

/** What `load` did. */
export interface LoadResult {
  source: SourceName;
  files: LoadedFile[];
  rows: number;
  skipped: number;
  /** Files that could not be read. */
  failed: number;
}

/** Progress of `load`, after each file. */
export interface LoadProgress {
  file: string;
  filesDone: number;
  files: number;
  rows: number;
}

/**
 * Creates the tables and copies logs into them. Files are read by the library's own DuckDB
 * reading (the same timestamps, flat fields and `metadata` the DuckDB engine sees) and inserted
 * in RowBinary batches; on a cluster through the `Distributed` table with
 * `insert_distributed_sync=1`, so a finished insert is on its shards.
 *
 * @example
 * const loader = clickhouseLoader({ url: 'http://127.0.0.1:8123', database: 'logs' });
 * await loader.init();
 * await loader.load('edgeLogs', 'logs/edge/*.ndjson');
 * await loader.insertEvents('edgeLogs', [{ id: 'e1', timestamp: '2026-11-21T10:15:02.123456Z', project: 'abc', metadata: {} }]);
 * await loader.close();
 */
export function clickhouseLoader(options: ClickHouseLoaderOptions): ClickHouseLoader {
  return new ClickHouseLoader(options);
}

/**
 * The loader `clickhouseLoader` returns: `init`, `load`, `insertEvents`, `close`. One DuckDB
 * (reading files) and one ClickHouse client per loader; calls are queued, never interleaved.
 *
 * @example
 * const loader: ClickHouseLoader = clickhouseLoader({ url: 'http://127.0.0.1:8123', database: 'logs' });
 */
export class ClickHouseLoader {
  private connection: Promise<Connection> | null = null;
  private readonly tableColumnNames = new Map<string, { at: number; names: Set<string> }>();
  private duckdb: Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> | null = null;
  /** DuckDB work runs one file at a time on one connection. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Rows per INSERT. */
  readonly batchRows: number;
  /** The sources it loads: the built-ins and `sourceDefinitions`. */
  readonly sourceNames: readonly SourceName[];
  private readonly sources: SourceSet;

  constructor(private readonly options: ClickHouseLoaderOptions) {
    this.batchRows = options.batchRows ?? 100_000;
    // Checked at once: a missing or bad name is a configuration mistake.
    requireDatabase(options, 'clickhouseLoader');
    requireServer(options, 'clickhouseLoader');
    sqlIdentifier(options.database, 'database');
    this.sources = sourcesOfTarget(options);
    this.sourceNames = this.sources.names;
    for (const source of this.sources.list) sqlIdentifier(tableOf(options, source), `tables.${source.name}`);
  }

  /** Creates the database and tables on the connected server (IF NOT EXISTS); see `schemaStatements`. */
  async init(schema: SchemaOptions = {}): Promise<void> {
    const { client, features } = await this.clickhouse();
    for (const statement of schemaStatements(this.options, schema)) await runCommand(client, statement, this.options.settings);
    // Tables made by an earlier version get the columns they lack (the rows there, the defaults).
    for (const source of this.sources.list) {
      const tables = this.options.cluster ? [localTableOf(this.options, source), tableOf(this.options, source)] : [tableOf(this.options, source)];
      for (const table of tables) {
        const sql = 'SELECT name FROM system.columns WHERE database = {database:String} AND table = {table:String}';
        const { data } = await runSql(client, features, { sql, params: { database: this.options.database, table }, settings: this.options.settings });
        const present = new Set(data.map((row) => String(row.name)));
        for (const statement of addMissingColumns(this.options, source, table, present, schema)) await runCommand(client, statement, this.options.settings);
      }
    }
  }

  /**
   * Copies the NDJSON and Parquet files the globs match into the source's table. A file that
   * cannot be read is reported in the result and the others are loaded. Loading is not
   * idempotent: the same file loaded twice is in the table twice.
   */
  async load(source: SourceName, inputs: string | readonly string[], options: { onProgress?: (progress: LoadProgress) => void } = {}): Promise<LoadResult> {
    const globs = typeof inputs === 'string' ? [inputs] : [...inputs];
    // What a query of these globs reads: each event once (a compacted dataset through its log,
    // NDJSON it already holds left out, damaged files reported instead of read).
    const reader = new SourceReader(globs, undefined, this.sources.get(source));
    let read = await reader.snapshot();
    // A dataset's file whose bytes are not those its commit recorded is reported, not loaded; one
    // a newer commit removed meanwhile (a merge) sends it to a fresh snapshot.
    for (let attempt = 1; ; attempt++) {
      try {
        await reader.verifyRows(read);
        break;
      } catch (error) {
        if (!staleSnapshot(error) || attempt >= MAX_ATTEMPTS) throw error;
        read = await reader.snapshot();
      }
    }
    const copies = new RangeCopies();
    try {
      return await this.loadRead(this.sources.get(source), read, copies, options);
    } finally {
      copies.close();
    }
  }

  private async loadRead(source: SourceDescriptor, read: ReadSet, copies: RangeCopies, options: { onProgress?: (progress: LoadProgress) => void }): Promise<LoadResult> {
    const files: Array<{ file: string; kind: 'ndjson' | 'parquet' }> = [
      ...read.ndjson.map((f) => ({ file: f.path, kind: 'ndjson' as const })),
      ...(await Promise.all(read.ranges.map(async (r) => ({ file: await copies.copy(r), kind: 'ndjson' as const })))),
      ...read.parquet.map((f) => ({ file: f.path, kind: 'parquet' as const })),
    ];
    const result: LoadResult = { source: source.name, files: [], rows: 0, skipped: 0, failed: 0 };
    for (const skipped of read.skipped) {
      result.files.push({ file: skipped.path, rows: 0, skipped: 0, error: skipped.message });
      result.failed++;
    }
    for (const { file, kind } of files) {
      let loaded: LoadedFile;
      try {
        loaded = { file, ...(await this.loadFile(source, file, kind)) };
      } catch (error) {
        if (!(error instanceof FileReadError)) throw error;
        loaded = { file, rows: error.rows, skipped: 0, error: error.message };
        result.failed++;
      }
      result.files.push(loaded);
      result.rows += loaded.rows;
      result.skipped += loaded.skipped;
      options.onProgress?.({ file, filesDone: result.files.length, files: files.length, rows: result.rows });
    }
    return result;
  }

  /**
   * Inserts events given as objects (what managed storage's ingest holds: `timestamp` in any
   * form of docs/semantics.md, "Timestamps", `metadata` as sent) with the same reading as `load`: they pass through
   * a temporary NDJSON file. Resolves once ClickHouse has them (on every shard concerned).
   */
  async insertEvents(source: SourceName, events: readonly object[]): Promise<{ rows: number; skipped: number }> {
    if (events.length === 0) return { rows: 0, skipped: 0 };
    const dir = await mkdtemp(join(tmpdir(), 'le-clickhouse-'));
    try {
      const file = join(dir, 'events.ndjson');
      await writeFile(file, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
      return await this.loadFile(this.sources.get(source), file, 'ndjson');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Reads one write-ahead segment of managed storage (NDJSON; its commit markers are not events)
   * by the same reading as `load`, keeping every row in the order of its line.
   */
  async readSegment(name: SourceName, file: string): Promise<SegmentRows> {
    const source = this.sources.get(name);
    const columns = tableColumns(source);
    const idAt = columns.findIndex((c) => c.name === 'id');
    return this.onDuckDB(async (connection) => {
      const out: SegmentRows = { ids: [], timestamps: [], rows: [] };
      const result = await connection.stream(await logFileSelect(connection, source, file, 'ndjson'));
      for await (const chunk of result) {
        const values = chunk.getColumns();
        for (let r = 0; r < chunk.rowCount; r++) {
          const row = values.map((column) => column[r] ?? null);
          out.ids.push(row[idAt] === null ? null : String(row[idAt]));
          out.timestamps.push(row[0] === null ? null : BigInt(row[0] as bigint));
          out.rows.push(row);
        }
      }
      return out;
    });
  }

  /**
   * The byte offsets (`_wal_offset`) of the lines of segment `segment` that the source's table
   * holds (queries/clickhouse/wal.shipped-offsets.sql), reading only the days between `first` and
   * `last`. Sent with `queryId`: while an insert of the segment sent with the same id still runs on
   * the server (its sender was killed), ClickHouse refuses this query instead of answering early.
   */
  /** ClickHouse refused a query because one with the same id still runs (error 216). */
  isStillRunning(error: unknown): boolean {
    return clickhouseErrorCode(error) === QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING;
  }

  async shippedOffsets(source: SourceName, segment: string, range: { first: bigint; last: bigint }, queryId: string): Promise<Set<number>> {
    const { client, features } = await this.clickhouse();
    const table = sqlTableName(this.options.database, tableOf(this.options, this.sources.get(source)), `tables.${source}`);
    const sql = statementSql('wal.shipped-offsets', 'wal_rows', table);
    const params = { segment, first: { timestamp: range.first }, last: { timestamp: range.last } };
    const { data } = await runSql(client, features, { sql, params, settings: this.options.settings, queryId }).catch((error) => {
      throw positionColumnsHint(error, table);
    });
    return new Set(data.map((row) => Number(row.offset)));
  }

  /**
   * Inserts rows of `readSegment` with their position (`segment`, and each row's line offset) in
   * one INSERT, on a cluster through the Distributed table with `insert_distributed_sync=1`.
   * `midway` runs when half the body is sent (crash tests).
   */
  async insertAt(name: SourceName, segment: string, rows: readonly unknown[][], offsets: readonly number[], options: { queryId: string; midway?: () => void }): Promise<void> {
    if (rows.length === 0) return;
    const source = this.sources.get(name);
    const { client } = await this.clickhouse();
    const { columns: present, keep } = await this.writableColumns(source);
    const columns = [...present, ...POSITION_COLUMNS];
    const encodings = columns.map((c) => c.encoding);
    const writer = new RowBinaryWriter();
    for (let i = 0; i < rows.length; i++) writer.writeRow(encodings, [...keep(rows[i]!), segment, offsets[i]!]);
    const table = sqlTableName(this.options.database, tableOf(this.options, source), `tables.${source.name}`);
    const settings = { ...this.options.settings, ...(this.options.cluster ? { insert_distributed_sync: 1 } : {}) };
    await insertRowBinary(
      client,
      table,
      columns.map((c) => sqlIdentifier(c.name, 'sourceDefinitions')),
      writer.take(),
      settings,
      options,
    ).catch((error) => {
      throw positionColumnsHint(error, table);
    });
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
    const clickhouse = await this.connection?.catch(() => null);
    await clickhouse?.close();
    const duckdb = await this.duckdb?.catch(() => null);
    if (duckdb) {
      duckdb.connection.closeSync();
      duckdb.instance.closeSync();
    }
  }

  private async loadFile(source: SourceDescriptor, file: string, kind: 'ndjson' | 'parquet'): Promise<{ rows: number; skipped: number }> {
    const { client } = await this.clickhouse();
    const { columns, keep } = await this.writableColumns(source);
    const encodings = columns.map((c) => c.encoding);
    const table = sqlTableName(this.options.database, tableOf(this.options, source), `tables.${source.name}`);
    const names = columns.map((c) => sqlIdentifier(c.name, 'sourceDefinitions'));
    const settings = { ...this.options.settings, ...(this.options.cluster ? { insert_distributed_sync: 1 } : {}) };
    return this.onDuckDB(async (connection) => {
      const writer = new RowBinaryWriter();
      let rows = 0,
        skipped = 0;
      const flush = async () => {
        if (writer.rows === 0) return;
        rows += writer.rows;
        await insertRowBinary(client, table, names, writer.take(), settings);
      };
      // Reading errors (a corrupt or vanished file) are the file's; ClickHouse's are the load's.
      const read = async <T>(step: () => Promise<T>) => {
        try {
          return await step();
        } catch (error) {
          throw new FileReadError(error, rows);
        }
      };
      const result = await read(async () => connection.stream(await logFileSelect(connection, source, file, kind)));
      const chunks = result[Symbol.asyncIterator]();
      for (;;) {
        const next = await read(() => chunks.next());
        if (next.done) break;
        const chunk = next.value;
        const values = chunk.getColumns();
        for (let r = 0; r < chunk.rowCount; r++) {
          const row = values.map((column) => column[r] ?? null);
          if (row[0] === null) skipped++;
          else writer.writeRow(encodings, keep(row));
        }
        if (writer.rows >= this.batchRows || writer.byteLength >= 64 << 20) await flush();
      }
      await flush();
      return { rows, skipped };
    });
  }

  /**
   * The source's columns the table has, and how to pick their values from a full row: a table
   * made by an earlier version may lack a data column its source gained since (the gateway log's
   * `status_code`); it is filled once `clickhouse init` adds it (asked again after a minute).
   * Every value is also in `metadata`, kept whole, so nothing is lost meanwhile.
   */
  private async writableColumns(source: SourceDescriptor): Promise<{ columns: readonly ColumnSpec[]; keep: (row: readonly unknown[]) => unknown[] }> {
    const { columns, keep } = await this.presentColumns(source);
    // Each JSON column's flattened paths and values, computed from the row read (src/util/json-flat-paths.ts).
    const read = tableColumns(source);
    const flat = flatJsonColumns(source);
    const sources = flat.map((c) => read.findIndex((r) => r.name === c.of));
    const present = flat.filter((c) => this.hasColumn(source, c.name));
    if (present.length === 0) return { columns, keep };
    return {
      columns: [...columns, ...present],
      keep: (row) => {
        const flattened = new Map<number, { paths: string[]; values: string[] }>();
        const extra = present.map((c) => {
          const at = sources[flat.indexOf(c)]!;
          if (!flattened.has(at)) flattened.set(at, flattenJson(row[at] === null || row[at] === undefined ? null : String(row[at])));
          return c.name.endsWith('_paths') ? flattened.get(at)!.paths : flattened.get(at)!.values;
        });
        return [...keep(row), ...extra];
      },
    };
  }

  /** Whether the table is known to have a column (true when its columns are not known). */
  private hasColumn(source: SourceDescriptor, name: string): boolean {
    const known = this.tableColumnNames.get(tableOf(this.options, source));
    return !known || known.names.size === 0 || known.names.has(name);
  }

  private async presentColumns(source: SourceDescriptor): Promise<{ columns: readonly ColumnSpec[]; keep: (row: readonly unknown[]) => unknown[] }> {
    const all = tableColumns(source);
    const table = tableOf(this.options, source);
    let known = this.tableColumnNames.get(table);
    if (!known || monotonicMs() - known.at > 60_000) {
      const { client, features } = await this.clickhouse();
      const sql = 'SELECT name FROM system.columns WHERE database = {database:String} AND table = {table:String}';
      const { data } = await runSql(client, features, { sql, params: { database: this.options.database, table }, settings: this.options.settings });
      known = { at: monotonicMs(), names: new Set(data.map((row) => String(row.name))) };
      this.tableColumnNames.set(table, known);
    }
    // An unknown table (or one without its key columns) keeps every column: the insert says what is wrong.
    if (known.names.size === 0 || !all.slice(0, 2).every((c) => known!.names.has(c.name))) return { columns: all, keep: (row) => [...row] };
    const indexes = all.flatMap((c, i) => (known!.names.has(c.name) ? [i] : []));
    if (indexes.length === all.length) return { columns: all, keep: (row) => [...row] };
    return { columns: indexes.map((i) => all[i]!), keep: (row) => indexes.map((i) => row[i]) };
  }

  private clickhouse(): Promise<Connection> {
    if (!this.connection) {
      this.connection = connect(this.options);
      this.connection.catch(() => (this.connection = null));
    }
    return this.connection;
  }

  private onDuckDB<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    this.duckdb ??= openDatabase(this.options.duckdb);
    const next = this.queue.then(async () => work((await this.duckdb!).connection));
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** ClickHouse's errors for a column the table does not have. */
const MISSING_COLUMN = new Set([
  16, // NO_SUCH_COLUMN_IN_TABLE (an INSERT)
  47, // UNKNOWN_IDENTIFIER (a SELECT)
]);

/** A missing position column means tables made before them: say how to add them. */
function positionColumnsHint(error: unknown, table: string): unknown {
  const code = clickhouseErrorCode(error);
  if (code === null || !MISSING_COLUMN.has(code) || !/_wal_(segment|offset)/.test(String((error as Error)?.message))) return error;
  return new EngineError('storage_failed', `${table} has no _wal_segment / _wal_offset columns (made by an earlier version): run \`log-endpoints clickhouse init\` again to add them.`, {
    cause: error,
  });
}

/** A log file DuckDB could not read; `rows` of it were inserted before the error. */
class FileReadError extends Error {
  constructor(
    cause: unknown,
    readonly rows: number,
  ) {
    super(String((cause as Error)?.message ?? cause).split('\n')[0], { cause });
  }
}
