import { DuckDBInstance } from '@duckdb/node-api';
import type { SourceGlobs } from '../src/index';
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
import type { LibraryProcess } from './library-process';

export interface Samples {
  warm: number[];
  cold: number[];
}

const DUCKDB = { threads: 2 };

/**
 * The library, caching off, in its own process (`LibraryProcess`: its memory its own, as in an
 * application): warm = one instance, many queries; cold = a new instance per query.
 * `warm: false` leaves the warm runs to the side-by-side rounds with the peers.
 */
export async function measureLibrary(library: LibraryProcess, sources: SourceGlobs, c: BenchCase, runs: number, options: { warm?: boolean } = {}): Promise<Samples> {
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) cold.push(await library.cold(sources, c));
  if (options.warm === false) return { warm: [], cold };
  await library.open(sources);
  const warm: number[] = [];
  try {
    await library.query(c);
    for (let i = 0; i < runs; i++) warm.push((await library.query(c)).ms);
  } finally {
    await library.close();
  }
  return { warm, cold };
}

/** One bare instance of `bareDuckDB`: `run` is what is timed (bind, run, rows read). */
export interface BareRunner {
  run: () => Promise<void>;
  close: () => void;
}

/**
 * The same SQL text and parameters on a bare @duckdb/node-api connection: no file listing, no
 * validation, no row shaping. The gap to the library's time in the same rounds is its overhead.
 * Returns how to open a fresh instance for the case (the SQL built once, outside every timing).
 */
export async function bareDuckDB(sources: SourceGlobs, c: BenchCase, sqlOf: 'current' | 'old' = 'current'): Promise<() => Promise<BareRunner>> {
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
  return open;
}

/**
 * Cold runs of a `bareDuckDB` case (a new instance each) and, unless `warm: false` leaves them to
 * the side-by-side rounds (`measureSideBySide`'s unchecked runners), its warm runs in a loop of its own.
 */
export async function measureBareDuckDB(open: () => Promise<BareRunner>, runs: number, options: { warm?: boolean } = {}): Promise<Samples> {
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    const db = await open();
    cold.push(await timeMs(db.run));
    db.close();
  }
  if (options.warm === false) return { warm: [], cold };
  const db = await open();
  const warm: number[] = [];
  await db.run();
  for (let i = 0; i < runs; i++) warm.push(await timeMs(db.run));
  db.close();
  return { warm, cold };
}
