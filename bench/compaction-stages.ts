/**
 * Compaction's CPU per event, statement by statement, in one process without HTTP: the ingest
 * bench's bodies of gateway events (bench/ingest.ts) parsed, appended to a write-ahead log and
 * inserted into the memory tables as the server does (segments of 8 MiB), then compacted as the
 * server's compactor does while behind: runs of `--segments` closed segments (two: a fifth of the
 * default budget's 80MB, `runBytesFor`), staged from the memory tables, in one burst DuckDB of one
 * thread. Ingest is done before compaction starts, so the process CPU (every thread) around each
 * of DuckDB's statements is that statement's; what is left of a run's CPU is its JavaScript and
 * file work (listing, the commit, placing files, fsyncs). Statements are grouped by the stage
 * their text names (`stageOf`).
 *
 *   npx tsx bench/compaction-stages.ts [--batch 1000] [--bodies 150] [--segments 2] [--memory 80MB] [--first]
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBConnection } from '@duckdb/node-api';
import { bodyLines } from '../src/ingest/body-lines';
import { Wal } from '../src/managed/wal/wal';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { compactFiles } from '../src/compaction/compact';
import { BurstDatabase } from '../src/duckdb/burst-database';
import { segmentSeqOf } from '../src/managed/wal/segment-name';
import { benchMemoryTables, bodies } from './ingest-stages';
import { round, loadAverage } from './stats';
import { peakRssMb } from './serve-process';

const { values } = parseArgs({
  options: {
    batch: { type: 'string', default: '1000' },
    bodies: { type: 'string', default: '150' },
    segments: { type: 'string', default: '2' },
    memory: { type: 'string', default: '80MB' },
    first: { type: 'boolean', default: false },
  },
});

/** The process's CPU (user + system, every thread) in µs. */
function cpu(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** The stage a statement's text belongs to (the statements of write-run.ts, sorted-layout-write.ts, stored-rollups.ts, discover-paths.ts). */
function stageOf(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim();
  if (s.includes('le_memory.')) return 'staging: the rows COPY out of the memory tables';
  if (/^COPY/i.test(s)) {
    // Named by where it writes: the run's data file, its head, or a stored rollup (by its file's name).
    const target = /\) TO '([^']+)'/.exec(s)?.[1] ?? '';
    const rollup = /_rollups\/([^/]+)/.exec(target)?.[1];
    if (rollup) return `rollup COPY: ${rollup.replace(/[-.][0-9a-f]{8,}.*$/, '').replace(/\.parquet$/, '')}`;
    if (/\/heads?($|\/)/.test(target)) return 'head COPY';
    if (/\/out($|\/)/.test(target)) return 'data file COPY (sorted table -> Parquet)';
    return `COPY to ${target.split('/').slice(-2).join('/')}`;
  }
  if (/count\(\*\) FILTER \(WHERE timestamp IS NOT NULL\) AS rows/.test(s)) return 'counts per input';
  if (/json_type|CAST\(metadata AS VARCHAR\) AS m/.test(s)) return 'discovery of typed paths';
  if (/TEMPORARY TABLE le_sorted_rows/i.test(s)) return 'the sort (sorted table)';
  if (/^(SET|PRAGMA|RESET|CHECKPOINT|BEGIN|COMMIT|ROLLBACK|DROP|ATTACH|DETACH|CREATE OR REPLACE MACRO)/i.test(s) || s.startsWith('SELECT current_setting')) return 'settings, macros, drops';
  return `other: ${s.slice(0, 90)}`;
}

let inFlight = 0;
let overlapped = 0;
const byStage = new Map<string, { cpu: number; calls: number; sample: string }>();
let measuring = false;
for (const method of ['run', 'runAndReadAll'] as const) {
  const original = DuckDBConnection.prototype[method] as (this: DuckDBConnection, sql: string, ...rest: unknown[]) => Promise<unknown>;
  (DuckDBConnection.prototype as unknown as Record<string, unknown>)[method] = async function (this: DuckDBConnection, sql: string, ...rest: unknown[]) {
    // A statement inside another (`runAndReadAll` runs `run`) is the outer one's.
    if (!measuring || inFlight > 0) {
      if (measuring) overlapped++;
      return original.call(this, sql, ...rest);
    }
    const at = cpu();
    inFlight++;
    try {
      return await original.call(this, sql, ...rest);
    } finally {
      inFlight--;
      const stage = stageOf(String(sql));
      const known = byStage.get(stage) ?? { cpu: 0, calls: 0, sample: String(sql).replace(/\s+/g, ' ').slice(0, 160) };
      known.cpu += cpu() - at;
      known.calls++;
      byStage.set(stage, known);
    }
  };
}

const batch = Number(values.batch);
const sent = bodies(batch, Number(values.bodies));
const dir = mkdtempSync(join(tmpdir(), 'le-bench-compaction-stages-'));
const { instance, setup, memory } = await benchMemoryTables(join(dir, 'tables'));
const wal = await Wal.open({ dir: join(dir, 'edgeLogs', 'wal') });
const database = new BurstDatabase(join(dir, 'spill'));
const source = BUILT_IN_SOURCE_SET.get('edgeLogs');
const duckdb = { threads: 1, memoryLimit: values.memory! };
try {
  const arrival = new Date().toISOString();
  // Ingest first, sixteen bodies a group as the server's connections make them.
  for (let i = 0; i < sent.length; i += 16) {
    const parsed = sent.slice(i, i + 16).map((body) => bodyLines(body, 'application/json', arrival, undefined, 'edgeLogs', true));
    const seqs = await Promise.all(parsed.map((p) => wal.append(p.lines)));
    await Promise.all(parsed.map((p, j) => memory.insert('edgeLogs', seqs[j]!.seq, p.lines, p)));
  }
  await wal.roll();
  await memory.settled();
  console.log(
    `${sent.length} bodies of ${batch} ingested, ${wal.closedSegments().length} segments; compaction runs of ${values.segments} segments, DuckDB ${JSON.stringify(duckdb)}; load ${loadAverage()}`,
  );
  const stageParsed = async (paths: readonly string[], rowsFile: string) => {
    const seqs = paths.map((path) => segmentSeqOf(basename(path)));
    if (!seqs.every((seq): seq is number => seq !== null)) return false;
    return memory.stage('edgeLogs', new Map(seqs.map((seq, i) => [seq, paths[i]!])), rowsFile);
  };
  let events = 0;
  let runs = 0;
  let total = 0;
  let verified = 0;
  let staged = true;
  mkdirSync(join(dir, 'edgeLogs', 'parquet'), { recursive: true });
  // The dataset's first run also checks every event it discovers paths in: once per dataset, so
  // left out (`--first` measures it too).
  let first = !values.first;
  while (wal.closedSegments().length) {
    measuring = !first;
    const files = wal
      .closedSegments()
      .slice(0, Number(values.segments))
      .map((s) => {
        const stats = statSync(s.path);
        return { path: s.path, kind: 'ndjson' as const, size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino };
      });
    // The server's compactor checks each segment's groups before its run (`Wal.verify`).
    const verifyAt = cpu();
    for (const f of files) await wal.verify(f.path);
    const verifyCpu = cpu() - verifyAt;
    const at = cpu();
    let stagedRun = false;
    const result = await compactFiles({
      source,
      sources: BUILT_IN_SOURCE_SET,
      outDir: join(dir, 'edgeLogs', 'parquet'),
      files,
      deleteSource: true,
      remove: (paths) => wal.release(paths),
      checkShape: false,
      sealed: true,
      duckdb,
      typedColumns: true,
      stageParsed: async (paths, rowsFile) => (stagedRun = await stageParsed(paths, rowsFile)),
      database,
    });
    if (first) {
      first = false;
      continue;
    }
    total += cpu() - at;
    verified += verifyCpu;
    staged &&= stagedRun;
    events += result.rows;
    runs++;
  }
  measuring = false;
  // Too few bodies for a run after the first (which is left out) would print NaN for every stage.
  if (runs === 0 || events === 0) {
    throw new Error(
      `no compaction run was measured: ${sent.length} bodies made ${values.first ? 'no run' : 'only the first run, which is left out'}; give more --bodies (60 or more) or fewer --segments`,
    );
  }
  const statements = [...byStage.values()].reduce((n, s) => n + s.cpu, 0);
  console.log(`${runs} runs measured (${values.first ? 'the first too' : 'after the first'}), ${events} events, every run staged from the memory tables: ${staged}; load at the end ${loadAverage()}`);
  console.log(`calls inside another (counted in the outer one): ${overlapped}`);
  console.log(`all of compactFiles: ${round(total / events, 2)} µs of CPU an event\n`);
  console.log('| stage | statements | µs of CPU an event | share |');
  console.log('|---|---:|---:|---:|');
  for (const [stage, s] of [...byStage].sort((a, b) => b[1].cpu - a[1].cpu)) console.log(`| ${stage} | ${s.calls} | ${round(s.cpu / events, 2)} | ${round((100 * s.cpu) / total, 1)} % |`);
  console.log(`| outside DuckDB's statements (JavaScript, files, fsyncs) | | ${round((total - statements) / events, 2)} | ${round((100 * (total - statements)) / total, 1)} % |`);
  console.log(`\nbefore each run, the segments' group checks (\`Wal.verify\`, not in compactFiles): ${round(verified / events, 2)} µs of CPU an event`);
  if (process.env.LE_BENCH_SAMPLES) for (const [stage, s] of byStage) console.log(`${stage}: ${s.sample}`);
  console.log(`peak RSS (VmHWM) of the bench process: ${peakRssMb(process.pid)} MiB`);
} finally {
  measuring = false;
  await database.close();
  await wal.close();
  await memory.close();
  setup.closeSync();
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
}
