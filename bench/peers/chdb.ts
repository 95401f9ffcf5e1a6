import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchCase } from '../cases';
import type { Dataset } from '../dataset';
import { timeMs } from '../stats';
import { EXPERT_LOADS, EXPERT_TABLES, expertQuery } from './clickhouse-expert';
import { loadChdb } from './install-chdb';
import { dataFilesGlob, type AnswerRow, type Peer } from './peer';

/**
 * ClickHouse 26.x in process (npm `chdb`), its tables in `<dataset>/peers/chdb`: the dataset's
 * events loaded once from its compacted Parquet (the same events, not the NDJSON again) into the
 * expert layout, each day merged into one part (as `compact` writes one file per day).
 */
export async function openChdb(dataset: Dataset, log: (line: string) => void): Promise<Peer> {
  const { Session } = await loadChdb(log);
  const path = join(dataset.dir, 'peers', 'chdb');
  const marker = join(path, 'loaded.json');
  const expected = JSON.stringify({ edge: dataFilesGlob(dataset, 'edge'), functions: dataFilesGlob(dataset, 'functions') });
  if (existsSync(marker) && (await readFile(marker, 'utf8')) !== expected) await rm(path, { recursive: true, force: true });
  const session = new Session(path);
  if (!existsSync(marker)) {
    for (const source of ['edge', 'functions'] as const) {
      const load = EXPERT_LOADS[source];
      session.query(`DROP TABLE IF EXISTS ${load.table}`);
      session.query(EXPERT_TABLES[source]);
      const ms = await timeMs(async () => {
        session.query(`INSERT INTO ${load.table} SELECT ${load.select} FROM file('${dataFilesGlob(dataset, source)}', Parquet, '${load.schema.replaceAll("'", "\\'")}') WHERE timestamp IS NOT NULL`);
        session.query(`OPTIMIZE TABLE ${load.table} FINAL`);
      });
      log(`chdb: loaded ${session.query(`SELECT count() FROM ${load.table}`, 'TSV').trim()} rows into ${load.table} in ${Math.round(ms / 1000)} s`);
    }
    await writeFile(marker, expected);
  }
  return {
    name: 'chdb',
    async run(c: BenchCase): Promise<AnswerRow[]> {
      const q = expertQuery(c);
      const result = await session.queryBindAsync(q.sql, q.params, { format: 'JSONEachRow' });
      const text = result.text();
      return text === '' ? [] : text.trimEnd().split('\n').map((line) => q.shape(JSON.parse(line) as Record<string, unknown>));
    },
    async close() {
      session.close();
    },
  };
}
