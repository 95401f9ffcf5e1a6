import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { openDatabase, type DatabaseSettings } from './open-database';
import { IS_EVENT, parquetLayoutCopy } from './parquet-layout';
import { sqlString } from './sql-literal';

let sequence = 0;

/**
 * Writes the events of newline-delimited JSON files as one Parquet file in the layout the
 * engine reads without any JSON parsing (the source relation itself: timestamp as TIMESTAMP,
 * metadata whole as JSON, the used metadata fields flattened), sorted by project, newest first, then id (so the same input gives the same file).
 * Lines that are not JSON objects hold no event and are left out. The file appears atomically:
 * it is written beside `outFile` under a temporary name, then renamed.
 *
 * @example
 * await writeParquet(edgeLogs, ['logs/edge/2026-11-21.ndjson'], 'logs/edge/2026-11-21.parquet');
 */
export async function writeParquet(source: SourceDescriptor, inputFiles: string[], outFile: string, settings: DatabaseSettings = {}): Promise<{ rows: number }> {
  const dir = dirname(outFile);
  const temp = join(dir, `.${basename(outFile)}.${process.pid}.${++sequence}.tmp`);
  const spill = `${temp}.spill`;
  const { connection, close } = await openDatabase(settings);
  try {
    // Sorting millions of events may not fit in memory: spill beside the output, not in the cwd.
    await connection.run(`SET temp_directory = ${sqlString(spill)}`);
    const reader = await connection.runAndReadAll(parquetLayoutCopy({ source, ndjson: inputFiles, target: temp, where: IS_EVENT }));
    const rows = Number(reader.getRows()[0]?.[0] ?? 0);
    await rename(temp, outFile);
    return { rows };
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    await close();
    await rm(spill, { recursive: true, force: true });
  }
}
