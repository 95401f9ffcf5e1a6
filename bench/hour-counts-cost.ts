/**
 * What the hour counts cost compaction (docs/performance.md, "Studio's chart from the hour
 * counts"): the gateway's rollup written from one compacted data file as compaction writes it
 * (its SQL over the file, COPY to zstd Parquet in 2,048-row groups; 2 threads, compaction's 80MB),
 * and, for comparison, a UNION ALL of one GROUP BY per field (the same rows, the file read once per
 * field). Prints rows, bytes, wall and the process's CPU of each; and the declared pairs' rollup
 * (docs/performance.md, "The Explorer's 7-day templates from the hour counts"), for the gateway or
 * Postgres (`postgresLogs`: a Postgres data file). A query that does not fit in 80MB is said to fail.
 *
 *   npx tsx bench/hour-counts-cost.ts <a data file (.parquet)> [runs] [edgeLogs|postgresLogs]
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { edgeLogs } from '../src/sources/edge-logs';
import { postgresLogs } from '../src/sources/supabase/postgres-logs';
import { typedHourlySql, typedPairsSql } from '../src/sources/typed-hourly';
import { typedColumnNames } from '../src/sources/typed-column-names';
import { sqlString } from '../src/duckdb/sql-literal';

const [file, runsArg, sourceArg] = process.argv.slice(2);
if (!file) throw new Error('usage: npx tsx bench/hour-counts-cost.ts <data file> [runs] [edgeLogs|postgresLogs]');
const source = sourceArg === 'postgresLogs' ? postgresLogs : edgeLogs;
const relation = source.relation;
const unionAll = source.typedFields
  .map((path) => {
    const { text, json } = typedColumnNames(path);
    return `SELECT project, date_trunc('hour', timestamp) AS timestamp, '${path}' AS field, "${text}" AS text, "${json}" AS json, count(*) AS n FROM ${relation} WHERE isfinite(timestamp) GROUP BY ALL`;
  })
  .join(' UNION ALL ');
// A folder to spill to, as compaction has (its own under the dataset).
const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '80MB', temp_directory: `/tmp/hour-counts-cost-${process.pid}.spill` });
const connection = await db.connect();
for (let run = 0; run < Number(runsArg ?? 3); run++) {
  for (const [name, sql] of [
    ['the hour counts (grouping sets)', typedHourlySql(relation, 'project', source.typedFields)],
    ['the declared pairs (their rollup)', typedPairsSql(relation, 'project', source.typedPairs)],
    ['union all, fields alone', unionAll],
  ] as const) {
    const target = `/tmp/hour-counts-cost-${process.pid}.parquet`;
    const cpu = process.cpuUsage();
    const started = performance.now();
    try {
      await connection.run(
        `COPY (WITH ${relation} AS NOT MATERIALIZED (SELECT * FROM read_parquet(${sqlString(file)})) ${sql}) TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)`,
      );
    } catch (error) {
      // Within compaction's memory or not: said, and the others measured.
      console.log(`${name}: failed: ${String(error).split('\n')[0]}`);
      continue;
    }
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const [rows, bytes] = (
      await connection.runAndReadAll(`SELECT count(*), (SELECT sum(total_compressed_size) FROM parquet_metadata(${sqlString(target)})) FROM read_parquet(${sqlString(target)})`)
    ).getRows()[0]!;
    console.log(`${name}: ${String(rows)} rows, ${String(bytes)} bytes compressed, ${wall.toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`);
  }
}
