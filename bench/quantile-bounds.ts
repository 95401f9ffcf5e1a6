/**
 * The library's p95/p99 of `functions.invocation-stats` 7day for the bench's two projects (the
 * busiest and the average), each day checked against the rank bound of docs/semantics.md taken
 * from the raw values of the bench's compacted data, and printed beside `quantile_disc`'s exact
 * answer (docs/performance.md, "The week's quantiles from a day's summary"). Exits 1 when one is
 * outside.
 *
 *   npx tsx bench/quantile-bounds.ts [--data .bench-data/default]
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createEndpoints } from '../src/index';
import { parquetEndpointsOptions } from './dataset';

const { values: args } = parseArgs({ options: { data: { type: 'string', default: '.bench-data/default' } } });
const dir = resolve(args.data!);
const ep = await createEndpoints(parquetEndpointsOptions(dir));
const db = await (await DuckDBInstance.create(':memory:')).connect();
await db.run("SET TimeZone='UTC'");
let checked = 0;
let outside = 0;
for (const project of ['mixxcgojbhvdmfbwybqx', 'fdwtflzzapajahtckzbl']) {
  const rows = (await ep.query('functions.invocation-stats', { project, interval: '7day' })).result as Array<Record<string, unknown>>;
  const raw = (
    await db.runAndReadAll(`
    SELECT strftime(date_trunc('day', timestamp), '%Y-%m-%dT%H:%M:%S') AS day, list(execution_time_ms ORDER BY execution_time_ms) FILTER (WHERE execution_time_ms IS NOT NULL) AS v
    FROM read_parquet('${dir}/parquet/functions/date=*/*.parquet') WHERE project_ref = '${project}' AND timestamp >= TIMESTAMP '2026-11-14' GROUP BY 1`)
  ).getRowObjectsJson();
  const byDay = new Map(raw.map((r) => [String(r.day), r.v as number[]]));
  for (const row of rows) {
    const v = byDay.get(String(row.timestamp).slice(0, 19));
    if (!v) continue;
    const n = v.length;
    for (const [col, q] of [
      ['p95_execution_time', 0.95],
      ['p99_execution_time', 0.99],
    ] as const) {
      const lo = v[Math.max(1, Math.floor((q - 0.01) * n)) - 1]!;
      const hi = v[Math.min(n, Math.ceil((q + 0.01) * n)) - 1]!;
      const got = row[col] as number;
      const exact = v[Math.max(1, Math.ceil(q * n)) - 1]!;
      console.log(`${project.slice(0, 4)} ${String(row.timestamp).slice(0, 10)} ${col} ${got} exact ${exact} bound [${lo}, ${hi}] ${got >= lo && got <= hi ? 'inside' : 'OUTSIDE'}`);
      checked++;
      if (!(got >= lo && got <= hi)) outside++;
    }
  }
}
console.log(`checked ${checked}, outside the bound ${outside}`);
await ep.close();
db.closeSync();
if (outside > 0) process.exitCode = 1;
