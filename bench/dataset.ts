import { existsSync } from 'node:fs';
import { readFile, writeFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { compactLogs } from '../src/compaction/compact';
import { generateLogs } from '../src/fixtures/generate-logs';
import { replicateDataset } from './replicate-dataset';

/** The instant every benchmark query is evaluated at; the data ends there. */
export const REFERENCE = new Date('2026-11-21T12:00:00Z');

export const SCALES = {
  // Four times the default in the same 7 days (see prepareLarge): how times grow with the data.
  large: { functionEvents: 20_000_000, edgeEvents: 40_000_000 },
  default: { functionEvents: 5_000_000, edgeEvents: 10_000_000 },
  small: { functionEvents: 500_000, edgeEvents: 1_000_000 },
  tiny: { functionEvents: 20_000, edgeEvents: 40_000 },
} as const;
export type Scale = keyof typeof SCALES;

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
  if (existsSync(marker)) {
    const { projects } = JSON.parse(await readFile(marker, 'utf8')) as { projects: string[] };
    log(`dataset: reusing ${dir}`);
    return { scale, projects, ndjson, parquet, dir };
  }
  await rm(dir, { recursive: true, force: true });
  const { functionEvents, edgeEvents } = SCALES[scale];
  log(`dataset: generating ${functionEvents.toLocaleString('en')} function and ${edgeEvents.toLocaleString('en')} edge events`);
  let lastShown = 0;
  const generated = await generateLogs({
    outDir: dir, now: REFERENCE, seed: 1, days: 7, projects: 20, functionEvents, edgeEvents,
    onProgress: (written, total) => {
      const pct = Math.floor((written / total) * 10);
      if (pct > lastShown) log(`  generated ${pct * 10}%`), (lastShown = pct);
    },
  });
  log('dataset: compacting to Parquet');
  await compactLogs({ source: 'edgeLogs', inputs: ndjson.edgeLogs, outDir: join(dir, 'parquet', 'edge') });
  await compactLogs({ source: 'functionEdgeLogs', inputs: ndjson.functionEdgeLogs, outDir: join(dir, 'parquet', 'functions') });
  await writeFile(marker, JSON.stringify({ projects: generated.projects }));
  return { scale, projects: generated.projects, ndjson, parquet, dir };
}

/**
 * The large scale: the default dataset four times over, each event copied with a new id (`-r1`…),
 * same projects, times and fields, compacted into datasets of the same layout (heads included).
 * Generating 60 M events as NDJSON first would take hours here; copies keep every distribution of
 * the default data while multiplying what each query must read, which is what the scale run
 * measures. There is no NDJSON at this scale (the NDJSON variants are skipped).
 */
async function prepareLarge(log: (line: string) => void): Promise<Dataset> {
  const base = await prepareDataset('default', log);
  const dir = resolve('.bench-data', 'large');
  const parquet = { edgeLogs: join(dir, 'parquet', 'edge'), functionEdgeLogs: join(dir, 'parquet', 'functions') };
  const marker = join(dir, 'ready.json');
  if (!existsSync(marker)) {
    await rm(dir, { recursive: true, force: true });
    log('dataset: large = the default dataset four times over, each copy with new ids');
    await replicateDataset('edgeLogs', join(base.dir, 'parquet', 'edge'), parquet.edgeLogs, 4);
    await replicateDataset('functionEdgeLogs', join(base.dir, 'parquet', 'functions'), parquet.functionEdgeLogs, 4);
    await writeFile(marker, JSON.stringify({ projects: base.projects }));
  } else log(`dataset: reusing ${dir}`);
  return { scale: 'large', projects: base.projects, ndjson: base.ndjson, parquet, dir };
}
