/**
 * Stored rollups written in other row-group sizes, beside the stored ones: for each seed case that
 * reads the rollup, the library's own statement (caught from the engine, its values bound) is run
 * over the stored files and over copies of them (the same rows, order and codec, written again in
 * groups of each `--sizes`, under `--out`), alternated round by round; prints the p50 per layout,
 * whether the answers are equal, and the process's peak (VmHWM). docs/performance.md, "Stored
 * rollups in row groups of 8,192".
 *
 *   npx tsx bench/rollup-row-groups.ts --rollup edge_logs_url_hourly [--filter interval=daily,interval=hourly]
 *        [--sizes 2048,8192,16384] [--rounds 40] [--data .bench-data/default] [--out /tmp/rollup-row-groups]
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { createEndpoints } from '../src/index';
import { ROLLUPS_DIR } from '../src/dataset/stored-rollups';
import { sqlString } from '../src/duckdb/sql-literal';
import { benchCases } from './cases';
import { parquetEndpointsOptions } from './dataset';
import { caught } from './caught-statements';
import { percentile, round, loadAverage } from './stats';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({
  options: {
    rollup: { type: 'string', default: 'edge_logs_url_hourly' },
    filter: { type: 'string', default: 'interval=daily,interval=hourly' },
    sizes: { type: 'string', default: '2048,8192,16384' },
    rounds: { type: 'string', default: '40' },
    data: { type: 'string', default: '.bench-data/default' },
    out: { type: 'string', default: '/tmp/rollup-row-groups' },
  },
});
const dir = resolve(args.data!);
const sizes = args.sizes!.split(',').map(Number);
const out = resolve(args.out!);
rmSync(out, { recursive: true, force: true });
const writer = await DuckDBInstance.create(':memory:', { threads: '2', autoinstall_known_extensions: 'false' });
const write = await writer.connect();
const ep = await createEndpoints(parquetEndpointsOptions(dir, { duckdb: { threads: 2 } }));
console.log(`data ${dir}; rollup ${args.rollup}; ${args.rounds} rounds; load ${loadAverage()}`);
console.log(`| case | ${['stored', ...sizes].join(' | ')} | answers equal |`);
console.log(`|---|${['stored', ...sizes].map(() => '---:').join('|')}|---|`);
try {
  for (const [project, rank] of [
    ['mixxcgojbhvdmfbwybqx', 1],
    ['fdwtflzzapajahtckzbl', 6],
  ] as const) {
    for (const c of benchCases(project, rank).filter((k) => args.filter!.split(',').some((f) => k.name.includes(f)))) {
      await ep.query(c.endpoint as never, c.params);
      const [r] = await caught(() => ep.query(c.endpoint as never, c.params));
      const files = [...new Set([...r!.sql.matchAll(new RegExp(`'([^']*/${ROLLUPS_DIR}/${args.rollup}/[^']*\\.parquet)'`, 'g'))].map((m) => m[1]!))];
      if (files.length === 0) continue;
      const statements = [r!.statement];
      for (const size of sizes) {
        let sql = r!.sql;
        for (const file of files) {
          const copy = join(out, String(size), file.split(`/${ROLLUPS_DIR}/`)[1]!);
          if (!existsSync(copy)) {
            mkdirSync(dirname(copy), { recursive: true });
            await write.run(`COPY (SELECT * FROM read_parquet(${sqlString(file)})) TO ${sqlString(copy)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${size})`);
          }
          sql = sql.replaceAll(sqlString(file), sqlString(copy));
        }
        statements.push(await r!.connection.prepare(sql));
      }
      const ms: number[][] = statements.map(() => []);
      const answers: string[] = [];
      for (let i = 0; i < Number(args.rounds); i++) {
        for (const [k, statement] of statements.entries()) {
          statement.bind(r!.values as never, r!.types as never);
          const started = performance.now();
          const result = await statement.runAndReadAll();
          ms[k]!.push(performance.now() - started);
          answers[k] = JSON.stringify(result.getRowsJson());
        }
      }
      for (const statement of statements.slice(1)) statement.destroySync();
      console.log(`| ${c.name} | ${ms.map((m) => round(percentile(m, 0.5), 2)).join(' | ')} | ${answers.every((a) => a === answers[0])} |`);
    }
  }
} finally {
  await ep.close();
  write.closeSync();
  writer.closeSync();
  rmSync(out, { recursive: true, force: true });
}
console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of this process ${peakRssMb(process.pid)} MiB`);
