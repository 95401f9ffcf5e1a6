import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchCase } from '../cases';
import type { Dataset } from '../dataset';
import { timeMs } from '../stats';
import { EXPERT_LOADS, EXPERT_TABLES, expertQuery } from './clickhouse-expert';
import { loadChdb } from './install-chdb';
import { dataFilesGlob, type AnswerRow, type Peer } from './peer';

/** chdb keeps one data directory per process: a second dataset (the 1x beside the 4x) gets a database in it. */
let opened: { session: ChdbSession; path: string } | null = null;
type ChdbSession = InstanceType<Awaited<ReturnType<typeof loadChdb>>['Session']>;

/**
 * ClickHouse 26.x in process (npm `chdb`), its tables in `<dataset>/peers/chdb`: the dataset's
 * events loaded once from its compacted Parquet (the same events, not the NDJSON again) into the
 * expert layout, each day merged into one part (as `compact` writes one file per day). With
 * `database`, the tables go into that database of the data directory opened first (chdb allows
 * one per process) and the expert SQL names them there.
 */
export async function openChdb(dataset: Dataset, log: (line: string) => void, database?: string): Promise<Peer> {
  const { Session } = await loadChdb(log);
  const path = opened?.path ?? join(dataset.dir, 'peers', 'chdb');
  const marker = join(path, database ? `loaded-${database}.json` : 'loaded.json');
  const expected = JSON.stringify({ edge: dataFilesGlob(dataset, 'edge'), functions: dataFilesGlob(dataset, 'functions') });
  if (!opened && existsSync(marker) && (await readFile(marker, 'utf8')) !== expected) await rm(path, { recursive: true, force: true });
  if (!opened) opened = { session: new Session(path), path };
  const session = opened.session;
  const qualified = (sql: string) => (database ? sql.replace(/\b(FROM|INTO|TABLE(?: IF (?:NOT )?EXISTS)?)\s+(edge_logs|function_edge_logs)\b/g, `$1 ${database}.$2`) : sql);
  if (!existsSync(marker) || (await readFile(marker, 'utf8')) !== expected) {
    if (database) session.query(`CREATE DATABASE IF NOT EXISTS ${database}`);
    for (const source of ['edge', 'functions'] as const) {
      const load = EXPERT_LOADS[source];
      session.query(qualified(`DROP TABLE IF EXISTS ${load.table}`));
      session.query(qualified(EXPERT_TABLES[source]));
      const ms = await timeMs(async () => {
        session.query(
          qualified(`INSERT INTO ${load.table} SELECT ${load.select} FROM file('${dataFilesGlob(dataset, source)}', Parquet, '${load.schema.replaceAll("'", "\\'")}') WHERE timestamp IS NOT NULL`),
        );
        session.query(qualified(`OPTIMIZE TABLE ${load.table} FINAL`));
      });
      log(`chdb: loaded ${session.query(qualified(`SELECT count() FROM ${load.table}`), 'TSV').trim()} rows into ${database ? `${database}.` : ''}${load.table} in ${Math.round(ms / 1000)} s`);
    }
    await writeFile(marker, expected);
  }
  return {
    name: 'chdb',
    async run(c: BenchCase): Promise<AnswerRow[]> {
      const q = expertQuery(c);
      const result = await session.queryBindAsync(qualified(q.sql), q.params, { format: 'JSONEachRow' });
      const text = result.text();
      return text === ''
        ? []
        : text
            .trimEnd()
            .split('\n')
            .map((line) => q.shape(JSON.parse(line) as Record<string, unknown>));
    },
    async close() {
      // The data directory stays open while another dataset's peer uses it.
      if (database || !opened) return;
      session.close();
      opened = null;
    },
  };
}
