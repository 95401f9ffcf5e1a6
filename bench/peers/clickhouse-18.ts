import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { clickhouseEngine, clickhouseLoader } from '../../src/clickhouse';
import { createEndpoints } from '../../src/index';
import { startClickHouseCluster } from '../../test/integration/support/clickhouse-cluster';
import type { BenchCase } from '../cases';
import { REFERENCE, type Dataset } from '../dataset';
import { timeMs } from '../stats';
import { EXPERT_18_FILLS, EXPERT_18_TABLES, expert18Query } from './clickhouse-18-expert';
import type { AnswerRow, Peer } from './peer';

/** The database the library's loader fills (the engine's own DDL) and its engine reads. */
const LIBRARY_DATABASE = 'library';

/**
 * One clickhouse-server 18.16 (Debian's package, started as the integration tests start it: own
 * data folder `<dataset>/peers/clickhouse-18.16`, kept between runs; loopback, a free port) and
 * two peers on it, over the same events:
 *
 * - `clickhouse-18.16`: the expert layout and SQL (clickhouse-18-expert.ts);
 * - `clickhouse-engine-18.16`: the library itself with its ClickHouse engine, on the tables its
 *   own `init` made and its loader filled from the dataset's compacted Parquet.
 *
 * Loaded once: the loader fills the library's tables, the expert tables are copied from them on
 * the server, and both are merged (OPTIMIZE FINAL: one part per day, as the Parquet has one
 * file per day, and as chdb's tables).
 */
export async function openClickHouse18(dataset: Dataset, log: (line: string) => void): Promise<Peer[]> {
  const dir = join(dataset.dir, 'peers', 'clickhouse-18.16');
  await mkdir(dir, { recursive: true });
  const server = await startClickHouseCluster({ shards: 1, name: 'bench', dir });
  const url = server.url;
  // The expert tables' fill and OPTIMIZE FINAL of 10 million rows take minutes on 18.16: past the
  // client's default 30 s request timeout, which ended a run after its 12-minute load.
  const { createClient } = await import('@clickhouse/client');
  const client = createClient({ url, request_timeout: 60 * 60_000 });
  const close = () => client.close();
  const command = (query: string) => client.command({ query, clickhouse_settings: { wait_end_of_query: 1 } });
  try {
    const marker = join(dir, 'loaded.json');
    const expected = JSON.stringify({ parquet: dataset.parquet });
    if (!existsSync(marker) || (await readFile(marker, 'utf8')) !== expected) {
      for (const db of [LIBRARY_DATABASE, 'expert']) await command(`DROP DATABASE IF EXISTS ${db}`);
      const loader = clickhouseLoader({ url, database: LIBRARY_DATABASE });
      try {
        await loader.init();
        for (const source of ['edgeLogs', 'functionEdgeLogs'] as const) {
          let rows = 0;
          const ms = await timeMs(async () => (rows = (await loader.load(source, dataset.parquet[source])).rows));
          log(`clickhouse 18.16: the library's loader put ${rows.toLocaleString('en')} rows into ${LIBRARY_DATABASE} (${source}) in ${Math.round(ms / 1000)} s`);
        }
      } finally {
        await loader.close();
      }
      await command('CREATE DATABASE expert');
      for (const source of ['edge', 'functions'] as const) {
        await command(EXPERT_18_TABLES[source]);
        await command(EXPERT_18_FILLS[source](LIBRARY_DATABASE));
      }
      for (const table of ['edge_logs', 'function_edge_logs']) {
        for (const db of [LIBRARY_DATABASE, 'expert']) await command(`OPTIMIZE TABLE ${db}.${table} FINAL`);
      }
      await writeFile(marker, expected);
    }
  } catch (error) {
    await close();
    await server.stop();
    throw error;
  }

  const expert: Peer = {
    name: 'clickhouse-18.16',
    async run(c: BenchCase): Promise<AnswerRow[]> {
      const q = expert18Query(c);
      let rows: Array<Record<string, unknown>> = [];
      for (const [i, statement] of q.statements.entries()) {
        const sql = i === 0 ? statement : statement.replaceAll('{bound}', String(rows[0]?.bound ?? 0));
        rows = await (await client.query({ query: sql, format: 'JSONEachRow' })).json<Record<string, unknown>>();
      }
      return rows.map(q.shape);
    },
    close,
  };
  const ep = await createEndpoints({ sources: {}, engine: clickhouseEngine({ url, database: LIBRARY_DATABASE }), now: () => REFERENCE, cache: false, limits: { queryTimeoutMs: 600_000 } });
  const engine: Peer = {
    name: 'clickhouse-engine-18.16',
    run: async (c) => (await ep.query(c.endpoint as string, c.params)).result as AnswerRow[],
    // Closed after the expert peer (run.ts closes them in order): the server goes last.
    close: async () => {
      await ep.close();
      await server.stop();
    },
  };
  return [expert, engine];
}
