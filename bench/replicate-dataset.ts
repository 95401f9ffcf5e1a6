import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceName } from '../src/engine/engine';
import { openDatabase } from '../src/duckdb/open-database';
import { appendCommit, ensureDataset, readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { headPathOf, hasHeads, writeHead } from '../src/dataset/newest-heads';
import { sqlString } from '../src/duckdb/sql-literal';
import { parquetLayoutOf } from '../src/duckdb/parquet-layout';

const PROJECT: Record<SourceName, string> = { edgeLogs: 'project', functionEdgeLogs: 'project_ref' };

/**
 * A dataset `factor` times the size of another: every day's events copied `factor` times (copy k
 * gets id `<id>-r<k>`), written sorted in the compacted layout (heads included) and committed, so
 * the engine reads it exactly as a compacted dataset. For the benchmark's scale run only.
 */
export async function replicateDataset(source: SourceName, from: string, to: string, factor: number): Promise<void> {
  const origin = readDatasetStateStable(from);
  await ensureDataset(to);
  const byDay = new Map<string, string[]>();
  for (const f of origin.files.values()) byDay.set(f.day!, [...(byDay.get(f.day!) ?? []), join(from, f.path)]);
  const { instance, connection } = await openDatabase({ threads: 2 });
  const add: DataFile[] = [];
  try {
    await connection.run(`SET temp_directory = ${sqlString(join(to, '.spill'))}`);
    for (const [day, files] of [...byDay].sort()) {
      const rel = `date=${day}/part-${'0'.repeat(16)}-0.parquet`;
      await mkdir(join(to, `date=${day}`), { recursive: true });
      const list = `[${files.map(sqlString).join(', ')}]`;
      await connection.run(`
        COPY (
          SELECT * REPLACE (CASE WHEN k = 0 THEN id ELSE id || '-r' || k END AS id)
          FROM read_parquet(${list}), range(${factor}) AS copies(k)
          ORDER BY ${PROJECT[source]}, timestamp DESC, id
        ) TO ${sqlString(join(to, rel))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${parquetLayoutOf(source).rowGroupRows}${parquetLayoutOf(source).dictionaryEntries ? `, DICTIONARY_SIZE_LIMIT ${parquetLayoutOf(source).dictionaryEntries}` : ''})`);
      const rows = Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlString(join(to, rel))})`)).getRowObjects()[0]!.n);
      const entry: DataFile = { path: rel, rows, bytes: (await stat(join(to, rel))).size, day };
      if (hasHeads(source)) {
        const headRows = await writeHead(connection, join(to, rel), headPathOf(join(to, rel)));
        entry.head = { path: headPathOf(rel), rows: headRows, bytes: (await stat(headPathOf(join(to, rel)))).size };
      }
      add.push(entry);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  await appendCommit(readDatasetStateStable(to), { source, add, remove: [], inputs: [] });
}
