import { existsSync } from 'node:fs';
import { readFile, writeFile, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { compactLogs } from '../src/compaction/compact';
import { generateLogs } from '../src/fixtures/generate-logs';
import type { BuiltInSourceName } from '../src/sources/built-ins';
import type { EndpointsOptions } from '../src/index';

/** The instant every benchmark query is evaluated at; the data ends there. */
export const REFERENCE = new Date('2026-11-21T12:00:00Z');

export const SCALES = {
  // Four times the default's traffic in the same 7 days (see prepareLarge): how times grow with the data.
  large: { functionEvents: 20_000_000, edgeEvents: 40_000_000 },
  default: { functionEvents: 5_000_000, edgeEvents: 10_000_000 },
  small: { functionEvents: 500_000, edgeEvents: 1_000_000 },
  tiny: { functionEvents: 20_000, edgeEvents: 40_000 },
} as const;
export type Scale = keyof typeof SCALES;

/** The folders `compact` writes a dataset's Parquet into, under its `dir`, as the library's `sources`. */
export function parquetSources(dir: string): { edgeLogs: string; functionEdgeLogs: string } {
  return { edgeLogs: join(dir, 'parquet', 'edge'), functionEdgeLogs: join(dir, 'parquet', 'functions') };
}

/**
 * The options a bench opens the library with over a dataset's compacted Parquet: its folders, the
 * benchmark's clock, caching off, then the bench's own `extra` (passed to any build's `createEndpoints`).
 *
 * @example const ep = await createEndpoints(parquetEndpointsOptions(dir, { duckdb: { threads: 2 } }));
 */
export function parquetEndpointsOptions<const E extends Omit<EndpointsOptions, 'sources'> = Record<never, never>>(dir: string, extra: E = {} as E) {
  return { sources: parquetSources(dir), now: () => REFERENCE, cache: false as const, ...extra };
}

export interface Dataset {
  scale: Scale;
  projects: string[];
  ndjson: { edgeLogs: string; functionEdgeLogs: string };
  parquet: { edgeLogs: string; functionEdgeLogs: string };
  dir: string;
}

/**
 * Generates (once per scale; kept in .bench-data/, which git ignores) 7 days of logs of 20
 * projects as NDJSON, then compacts them into the Parquet layout of `compact`.
 */
export async function prepareDataset(scale: Scale, log: (line: string) => void): Promise<Dataset> {
  if (scale === 'large') return prepareLarge(log);
  const dir = resolve('.bench-data', scale);
  const marker = join(dir, 'ready.json');
  const ndjson = { edgeLogs: join(dir, 'edge', 'edge-logs.ndjson'), functionEdgeLogs: join(dir, 'functions', 'function-logs.ndjson') };
  const parquet = { edgeLogs: join(dir, 'parquet', 'edge', '**', '*.parquet'), functionEdgeLogs: join(dir, 'parquet', 'functions', '**', '*.parquet') };
  const compactBoth = async () => {
    const outDirs = parquetSources(dir);
    await compactLogs({ source: 'edgeLogs', inputs: ndjson.edgeLogs, outDir: outDirs.edgeLogs });
    await compactLogs({ source: 'functionEdgeLogs', inputs: ndjson.functionEdgeLogs, outDir: outDirs.functionEdgeLogs });
  };
  if (existsSync(marker)) {
    const { projects } = JSON.parse(await readFile(marker, 'utf8')) as { projects: string[] };
    log(`dataset: reusing ${dir}`);
    // Compacting again adds nothing (exactly once) but the stored rollups a file lacks or holds
    // from another definition: a dataset compacted by an earlier version is read as users' are
    // once `compact` has run over it, not through the raw statements.
    await compactBoth();
    return { scale, projects, ndjson, parquet, dir };
  }
  await rm(dir, { recursive: true, force: true });
  const { functionEvents, edgeEvents } = SCALES[scale];
  log(`dataset: generating ${functionEvents.toLocaleString('en')} function and ${edgeEvents.toLocaleString('en')} edge events`);
  let lastShown = 0;
  const generated = await generateLogs({
    outDir: dir,
    now: REFERENCE,
    seed: 1,
    days: 7,
    projects: 20,
    functionEvents,
    edgeEvents,
    onProgress: (written, total) => {
      const pct = Math.floor((written / total) * 10);
      if (pct > lastShown) log(`  generated ${pct * 10}%`), (lastShown = pct);
    },
  });
  log('dataset: compacting to Parquet');
  await compactBoth();
  await writeFile(marker, JSON.stringify({ projects: generated.projects }));
  return { scale, projects: generated.projects, ndjson, parquet, dir };
}

/**
 * The large scale: four times the default's traffic (the same 20 projects, seed and 7 days, four
 * times the events of each), generated as distinct events, so every column compresses as real
 * traffic does (copies of the default's events with new ids left the Parquet only 1.1x bigger and
 * flattered every column store). Written a UTC day at a time: each day's NDJSON (about 4.6 GB of
 * requests) is compacted by `compact` while the next day is generated, then deleted, so a day's
 * sort fits in memory and at most two days of NDJSON sit on disk (one file of 32 GB and its sort
 * took far too long). One file per day, like the default. No NDJSON is kept, so there are no NDJSON
 * variants at this scale; to compact again (a changed layout), delete the folder: generating is
 * a few minutes of the whole. A run that stops resumes: days already compacted are skipped (their
 * events are generated again, not written).
 */
async function prepareLarge(log: (line: string) => void): Promise<Dataset> {
  const dir = resolve('.bench-data', 'large');
  const ndjson = { edgeLogs: join(dir, 'edge', 'edge-logs-*.ndjson'), functionEdgeLogs: join(dir, 'functions', 'function-logs-*.ndjson') };
  const parquet = parquetSources(dir);
  const marker = join(dir, 'ready.json');
  if (existsSync(marker)) {
    const { projects } = JSON.parse(await readFile(marker, 'utf8')) as { projects: string[] };
    log(`dataset: reusing ${dir}`);
    return { scale: 'large', projects, ndjson, parquet, dir };
  }
  const progressFile = join(dir, 'days-compacted.json');
  const compacted = new Set<string>(existsSync(progressFile) ? (JSON.parse(await readFile(progressFile, 'utf8')) as string[]) : []);
  const { functionEvents, edgeEvents } = SCALES.large;
  log(`dataset: generating ${functionEvents.toLocaleString('en')} function and ${edgeEvents.toLocaleString('en')} edge events (4x the default's traffic), compacting each day as it is written`);
  // A bounded sort (it spills into the dataset's staging folder): the machine is shared.
  const duckdb = { threads: 2, memoryLimit: '6GB' };
  const started = Date.now();
  let compaction: Promise<void> = Promise.resolve();
  const compactDay = async (source: BuiltInSourceName, file: string) => {
    const name = basename(file);
    if (compacted.has(name)) return rm(file, { force: true });
    const t = Date.now();
    const result = await compactLogs({ source, inputs: file, outDir: parquet[source], duckdb, deleteSource: true });
    if (!result.deletedSource) throw new Error(`dataset: ${file} was not compacted whole (${JSON.stringify(result.keptFiles)})`);
    compacted.add(name);
    await writeFile(progressFile, JSON.stringify([...compacted]));
    log(`  ${name}: ${result.rows.toLocaleString('en')} events compacted in ${Math.round((Date.now() - t) / 1000)} s (${Math.round((Date.now() - started) / 1000)} s in all)`);
  };
  const generated = await generateLogs({
    outDir: dir,
    now: REFERENCE,
    seed: 1,
    days: 7,
    projects: 20,
    functionEvents,
    edgeEvents,
    filePerDay: {
      // The next day is generated while this one compacts; the generator waits for the one before.
      onDayFile: async (source, file) => {
        const before = compaction;
        compaction = before.then(() => compactDay(source, file));
        await before;
      },
    },
  });
  await compaction;
  await rm(progressFile, { force: true });
  await writeFile(marker, JSON.stringify({ projects: generated.projects }));
  log(`dataset: ${dir} ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return { scale: 'large', projects: generated.projects, ndjson, parquet, dir };
}
