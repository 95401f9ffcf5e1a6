import { DuckDBInstance } from '@duckdb/node-api';
import { createEndpoints, type SourceGlobs } from '../src/index';
import { findDefinition } from '../src/definitions/registry';
import { normalizeParams } from '../src/definitions/params';
import { planQuery } from '../src/definitions/plan-query';
import { bindRequest } from '../src/engine/duckdb/bind-request';
import { fullQuerySql } from '../src/engine/duckdb/statement-sql';
import { compiledStatement, sourcesReadBy } from '../src/query/statement-reads';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { earliestDayOf, parquetFilesOf } from '../src/engine/duckdb/list-files';
import { parquetSchema } from '../src/duckdb/parquet-schema';
import { sourceRelation } from '../src/duckdb/source-relations';
import { readFileSync } from 'node:fs';
import type { BenchCase } from './cases';
import { REFERENCE } from './dataset';
import { timeMs } from './stats';

export interface Samples {
  warm: number[];
  cold: number[];
}

const DUCKDB = { threads: 2 };

/**
 * The library, caching off: warm = one instance, many queries; cold = a new instance per query.
 * `warm: false` leaves the warm runs to the side-by-side rounds with the peers.
 */
export async function measureLibrary(sources: SourceGlobs, c: BenchCase, runs: number, options: { warm?: boolean } = {}): Promise<Samples> {
  // No time limit worth the name: the NDJSON cases run for tens of seconds by design (what the
  // compacted layout saves), and a benchmark measures them rather than cutting them off.
  const open = () => createEndpoints({ sources, now: () => REFERENCE, cache: false, duckdb: DUCKDB, limits: { queryTimeoutMs: 600_000 } });
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    const ep = await open();
    cold.push(await timeMs(() => ep.query(c.endpoint as string, c.params)));
    await ep.close();
  }
  if (options.warm === false) return { warm: [], cold };
  const ep = await open();
  const warm: number[] = [];
  try {
    await ep.query(c.endpoint as string, c.params);
    for (let i = 0; i < runs; i++) warm.push(await timeMs(() => ep.query(c.endpoint as string, c.params)));
  } finally {
    await ep.close();
  }
  return { warm, cold };
}

/**
 * The same SQL text and parameters on a bare @duckdb/node-api connection: no file listing, no
 * validation, no row shaping. The gap to `measureLibrary` is the library's overhead.
 */
export async function measureBareDuckDB(sources: SourceGlobs, c: BenchCase, runs: number, sqlOf: 'current' | 'old' = 'current'): Promise<Samples> {
  const definition = findDefinition(c.endpoint);
  const request = planQuery(definition, normalizeParams(definition, c.params), REFERENCE);
  const source = sourcesReadBy(definition.sql.duckdb, BUILT_IN_SOURCE_SET)[0]!;
  const globs = sources[source.name];
  const connect = async () => {
    const instance = await DuckDBInstance.create(':memory:', { threads: String(DUCKDB.threads), autoinstall_known_extensions: 'false' });
    const connection = await instance.connect();
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run('SET parquet_metadata_cache = true');
    return { instance, connection };
  };
  // The SQL is built once, outside every timing, so a cold run reads the files for the first time.
  const setup = await connect();
  // The same files the library reads for this request (day partitions before the window left out).
  const earliestDay = earliestDayOf(request.notBefore);
  const parquet = await parquetFilesOf(typeof globs === 'string' ? [globs] : [...(globs ?? [])], earliestDay);
  const files = { ndjson: [], parquet, parquetTypes: await parquetSchema(setup.connection, parquet) };
  // `old`: the SQL of queries/duckdb/ before this round of speed work (bench/baseline-sql/), the
  // baseline the library must now beat, over the same files and with the same parameters.
  const sql =
    sqlOf === 'current'
      ? fullQuerySql(compiledStatement(definition.sql.duckdb, BUILT_IN_SOURCE_SET), new Map([[source, files]]))
      : `WITH ${source.relation} AS (\n${sourceRelation(source, files)}\n)\n${readFileSync(new URL(`./baseline-sql/${c.endpoint}.sql`, import.meta.url), 'utf8')}`;
  setup.connection.closeSync();
  setup.instance.closeSync();
  const open = async () => {
    const { instance, connection } = await connect();
    // What a careful hand-written caller does: prepare once, bind and run each time.
    let prepared: Awaited<ReturnType<typeof connection.prepare>> | null = null;
    const run = async () => {
      prepared ??= await connection.prepare(sql);
      bindRequest(prepared, request);
      const reader = await prepared.runAndReadAll();
      reader.getRowObjects();
    };
    return { run, close: () => (connection.closeSync(), instance.closeSync()) };
  };
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    const db = await open();
    cold.push(await timeMs(db.run));
    db.close();
  }
  const db = await open();
  const warm: number[] = [];
  await db.run();
  for (let i = 0; i < runs; i++) warm.push(await timeMs(db.run));
  db.close();
  return { warm, cold };
}
