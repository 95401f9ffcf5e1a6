/**
 * Studio's 7-day kinds over two copies of the same compacted week in one process
 * (docs/performance.md, "Studio's chart from the hour counts"): one whose data files hold the hour
 * counts (`log-endpoints check --repair --supabase` computes them for files compacted before), one
 * without (as a build before them wrote it). This build reads the first copy's charts from the
 * hour counts and the second's from the rows. Every answer is compared first, then rounds
 * alternate which copy goes first; p50 wall ms and the median of the process's CPU per call.
 *
 *   npx tsx bench/studio-hour-counts.ts <managed data dir with> <managed data dir without> [rounds]
 */
import { createEndpoints, supabasePreset, type Endpoints } from '../src/index';
import { studioCases, type StudioCase } from './studio-cases';
import { REFERENCE } from './dataset';
import { loadAverage } from './stats';

const [withDir, withoutDir, roundsArg] = process.argv.slice(2);
if (!withDir || !withoutDir) throw new Error('usage: npx tsx bench/studio-hour-counts.ts <data dir with> <data dir without> [rounds]');
const rounds = Number(roundsArg ?? 21);

/** An instance over a managed data dir's gateway and Postgres datasets, read as compacted folders. */
const open = (dir: string) =>
  createEndpoints({
    ...supabasePreset,
    sources: { edgeLogs: `${dir}/edgeLogs/parquet`, postgresLogs: `${dir}/postgresLogs/parquet` },
    now: () => REFERENCE,
    cache: false,
    duckdb: { threads: 2 },
  });

async function call(ep: Endpoints, c: StudioCase): Promise<{ ms: number; cpu: number; result: unknown }> {
  const r = c.request;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const { result } = await ep.query('logs.all', { project: 'default', iso_timestamp_start: r.iso_timestamp_start, iso_timestamp_end: r.iso_timestamp_end }, { sql: r.sql });
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpu: (used.user + used.system) / 1000, result };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const eps = { with: await open(withDir), without: await open(withoutDir) };
try {
  const started = new Date().toISOString();
  const loadBefore = loadAverage();
  const lines: string[] = [];
  for (const c of studioCases('none').filter((k) => k.kind.includes('7 days'))) {
    const same = JSON.stringify((await call(eps.with, c)).result) === JSON.stringify((await call(eps.without, c)).result);
    const times = { with: { ms: [] as number[], cpu: [] as number[] }, without: { ms: [] as number[], cpu: [] as number[] } };
    for (let i = 0; i < rounds; i++) {
      for (const copy of i % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
        const m = await call(eps[copy], c);
        times[copy].ms.push(m.ms);
        times[copy].cpu.push(m.cpu);
      }
    }
    const [w, wo] = [times.with, times.without];
    lines.push(
      `| ${c.kind} | ${median(w.ms).toFixed(2)} / ${median(w.cpu).toFixed(2)} | ${median(wo.ms).toFixed(2)} / ${median(wo.cpu).toFixed(2)} | ${(median(wo.cpu) / median(w.cpu)).toFixed(2)} | ${same ? 'same' : 'different'} |`,
    );
  }
  console.log(`${started} - ${new Date().toISOString()}, ${rounds} rounds, load average ${loadBefore} to ${loadAverage()}`);
  console.log('| request kind | with the hour counts: p50 / CPU ms | without: p50 / CPU ms | CPU without / with | answers |');
  console.log('|---|---|---|---:|---|');
  for (const line of lines) console.log(line);
} finally {
  await eps.with.close();
  await eps.without.close();
}
