/**
 * usage.api-counts for a single project (`singleProject: true`, as `serve --supabase` runs: no
 * pattern, every request counts) over the benchmark's compacted week: p50 per interval, with the
 * process's peak (VmHWM). To time another build's statements, run it from that build's checkout.
 * docs/performance.md, "Usage per origin: a plain-text pattern's origins counted without their URLs".
 *
 *   npx tsx bench/single-project-usage.ts [--runs 21] [--data .bench-data/default]
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createEndpoints } from '../src/index';
import { parquetEndpointsOptions } from './dataset';
import { percentile, round, loadAverage } from './stats';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '21' }, data: { type: 'string', default: '.bench-data/default' } } });
const dir = resolve(args.data!);
console.log(`data ${dir}; ${args.runs} calls per interval; load ${loadAverage()}`);
const ep = await createEndpoints(parquetEndpointsOptions(dir, { duckdb: { threads: 2 }, singleProject: true }));
try {
  console.log('| interval | rows | p50 ms |');
  console.log('|---|---:|---:|');
  for (const interval of ['daily', '7day', '3day', 'hourly'] as const) {
    const ms: number[] = [];
    let rows = 0;
    for (let i = 0; i < Number(args.runs); i++) {
      const started = performance.now();
      // No project with singleProject (docs/api.md): every request counts.
      rows = (await ep.query('usage.api-counts', { interval })).result.length;
      ms.push(performance.now() - started);
    }
    console.log(`| ${interval} | ${rows} | ${round(percentile(ms, 0.5), 2)} |`);
  }
} finally {
  await ep.close();
}
console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of this process ${peakRssMb(process.pid)} MiB`);
