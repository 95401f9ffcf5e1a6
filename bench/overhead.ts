/**
 * The library's own cost per query (docs/performance.md): the same statement, files and
 * parameters through `createEndpoints(...).query` (cache off) and on a bare `@duckdb/node-api`
 * connection (prepared once, bound and run each time), interleaved run by run so a machine that
 * gets busier slows both alike. Prints the medians and their difference per case.
 *
 *   npx tsx bench/overhead.ts [--runs 300] [--data .bench-data/default] [--profile]
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
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
import { parquetEndpointsOptions, parquetSources, REFERENCE } from './dataset';
import { percentile, round, loadAverage } from './stats';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '300' }, data: { type: 'string', default: '.bench-data/default' } },
});
const runs = Number(args.runs);
const dir = resolve(args.data!);
const sources: SourceGlobs = parquetSources(dir);
const PROJECTS: Array<[string, string]> = [
  ['P1', 'mixxcgojbhvdmfbwybqx'],
  ['P6', 'fdwtflzzapajahtckzbl'],
];
const DUCKDB = { threads: 2 };

/** The bare side: the library's SQL over the same files, prepared once. */
async function bare(endpoint: string, params: Record<string, string>) {
  const definition = findDefinition(endpoint);
  const request = planQuery(definition, normalizeParams(definition, params), REFERENCE);
  const source = sourcesReadBy(definition.sql.duckdb, BUILT_IN_SOURCE_SET)[0]!;
  const globs = sources[source.name]!;
  const instance = await DuckDBInstance.create(':memory:', { threads: String(DUCKDB.threads), autoinstall_known_extensions: 'false' });
  const connection = await instance.connect();
  await connection.run("SET TimeZone = 'UTC'");
  await connection.run('SET parquet_metadata_cache = true');
  const parquet = await parquetFilesOf(typeof globs === 'string' ? [globs] : [...globs], earliestDayOf(request.notBefore));
  const sql = fullQuerySql(compiledStatement(definition.sql.duckdb, BUILT_IN_SOURCE_SET), new Map([[source, { ndjson: [], parquet, parquetTypes: await parquetSchema(connection, parquet) }]]));
  const prepared = await connection.prepare(sql);
  return {
    run: async () => {
      bindRequest(prepared, request);
      (await prepared.runAndReadAll()).getRowObjects();
    },
    close: () => (prepared.destroySync(), connection.closeSync(), instance.closeSync()),
  };
}

// invocation-stats only: logs.all reads heads day by day, which no single bare statement does.
const cases: Array<{ name: string; endpoint: string; params: Record<string, string> }> = PROJECTS.flatMap(([label, project]) => [
  { name: `invocation-stats ${label} 1hr`, endpoint: 'functions.invocation-stats', params: { project, interval: '1hr' } },
  { name: `invocation-stats ${label} 1day`, endpoint: 'functions.invocation-stats', params: { project, interval: '1day' } },
]);

console.log(`data ${dir}, ${runs} runs each, interleaved; load ${loadAverage()}`);
const ep = await createEndpoints(parquetEndpointsOptions(dir, { duckdb: DUCKDB }));
try {
  for (const c of cases) {
    const b = await bare(c.endpoint, c.params);
    const lib = () => ep.query(c.endpoint as never, c.params);
    await lib();
    await b.run();
    const libMs: number[] = [];
    const bareMs: number[] = [];
    const diff: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first, so neither always meets a warmer cache.
      const order = i % 2 ? [lib, b.run] : [b.run, lib];
      const times: number[] = [];
      for (const f of order) {
        const t = process.hrtime.bigint();
        await f();
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      const [l, r] = i % 2 ? [times[0]!, times[1]!] : [times[1]!, times[0]!];
      libMs.push(l);
      bareMs.push(r);
      diff.push(l - r);
    }
    b.close();
    const p = (s: number[]) => round(percentile(s, 0.5), 3);
    console.log(`${c.name.padEnd(28)} library ${p(libMs)} ms  bare ${p(bareMs)} ms  overhead (median of pairs) ${p(diff)} ms  median diff ${round(p(libMs) - p(bareMs), 3)} ms`);
  }
} finally {
  await ep.close();
}
console.log(`load at the end ${loadAverage()}`);
