import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceInspection } from '../engine';
import type { ReadSet } from '../../files/source-reader';
import { emptyNdjsonFile } from '../../duckdb/empty-ndjson-file';
import { NOT_A_COMMIT_MARKER, type SourceFiles } from '../../duckdb/source-relations';
import { sqlStringList } from '../../duckdb/sql-literal';
import type { SourceDescriptor } from '../../sources/source-descriptor';

/**
 * Counts of one source over one snapshot (see the engine's `inspectSources`): its files, lines,
 * lines skipped, Parquet rows, globs, and the files left out.
 *
 * @example
 * const counts = await inspectSource(connection, source, read, await inputs.sourceFiles(connection, read));
 */
export async function inspectSource(connection: DuckDBConnection, source: SourceDescriptor, read: ReadSet, files: SourceFiles): Promise<SourceInspection> {
  let lines = 0,
    skippedLines = 0,
    parquetRows = 0;
  if (files.ndjson.length) {
    const r = await connection.runAndReadAll(`
        SELECT count(*) FILTER (WHERE ${NOT_A_COMMIT_MARKER}) AS lines,
               count(*) FILTER (WHERE json IS NULL OR json_type(json) <> 'OBJECT') AS skipped
        FROM read_json_objects(${sqlStringList([...files.ndjson, emptyNdjsonFile()])}, format = 'newline_delimited',
                               compression = 'auto_detect', ignore_errors = true)`);
    const [row] = r.getRowObjects();
    lines = Number(row?.lines ?? 0);
    skippedLines = Number(row?.skipped ?? 0);
  }
  if (files.memory) {
    // Managed storage's acknowledged lines not compacted yet, held in memory instead of read
    // from their segments: lines all the same, each one event (ingest checked them).
    const r = await connection.runAndReadAll(`SELECT count(*) AS n FROM (${files.memory.rows})`);
    lines += Number(r.getRowObjects()[0]?.n ?? 0);
  }
  if (files.parquet.length) {
    const r = await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlStringList(files.parquet)}, union_by_name = true)`);
    parquetRows = Number(r.getRowObjects()[0]?.n ?? 0);
  }
  return {
    source: source.name,
    files: read.ndjson.length + read.ranges.length + read.parquet.length,
    lines,
    skippedLines,
    parquetRows,
    globs: read.globs,
    emptyGlobs: read.globs.filter((g) => g.files === 0).map((g) => g.glob),
    skippedFiles: read.skipped,
    coveredFiles: read.covered.length,
  };
}
