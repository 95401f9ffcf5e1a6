/**
 * Queries on managed storage while it ingests, side by side with the same events compacted by
 * hand (`compact`, one run): the cost of letting the library own the data. The newest N events of
 * the benchmark dataset are ingested through `ep.ingest` (batches of 1000), the background
 * compactor turns them into the dataset, then every case is timed warm while a writer keeps
 * ingesting new events (a few thousand a second, each batch fsynced). Target: within 1.2x.
 *
 *   npm run bench                                    (part of the full run)
 *   npx tsx bench/managed.ts [--events 1000000]      (on its own, after the dataset exists)
 */
import { createReadStream } from 'node:fs';
import { appendFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createEndpoints, type Endpoints } from '../src/index';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetState } from '../src/dataset/dataset-log';
import type { BenchCase } from './cases';
import { REFERENCE, type Dataset } from './dataset';
import { summarize, timeMs, type Timing } from './stats';

export interface ManagedCase {
  name: string;
  /** Managed storage with nothing being ingested: what its layout costs on its own. */
  managed_idle: Timing;
  managed: Timing;
  compacted: Timing;
  ratio: number;
  ratio_idle: number;
}

export interface ManagedResult {
  events: number;
  /** Events acknowledged by the background writer while the cases ran. */
  ingested_while_querying: number;
  cases: ManagedCase[];
}

/**
 * The last `count` lines of an NDJSON file: the newest events (the generator writes them in time
 * order), so every window of the cases holds some. Read from an offset estimated from the length of
 * the first lines, with room to spare.
 */
async function lastLines(path: string, count: number): Promise<string[]> {
  const sample: string[] = [];
  const head = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of head) if (sample.push(line) >= 1000) break;
  head.close();
  const average = sample.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) / sample.length;
  const { size } = await stat(path);
  const start = Math.max(0, Math.floor(size - average * count * 1.5));
  const lines: string[] = [];
  const reader = createInterface({ input: createReadStream(path, { start }), crlfDelay: Infinity });
  let first = start > 0;
  for await (const line of reader) {
    // The first line read from an offset is cut.
    if (first) {
      first = false;
      continue;
    }
    if (line.trim() !== '') lines.push(line);
  }
  return lines.slice(-count);
}

/** One event per line, written in slices: a million lines joined are past V8's longest string. */
async function writeLines(path: string, lines: readonly string[]): Promise<void> {
  await writeFile(path, '');
  for (let i = 0; i < lines.length; i += 10_000) await appendFile(path, `${lines.slice(i, i + 10_000).join('\n')}\n`);
}

async function ingestAll(ep: Endpoints, source: string, lines: string[]): Promise<void> {
  for (let i = 0; i < lines.length; i += 1000) {
    await ep.ingest(source, lines.slice(i, i + 1000).map((l) => JSON.parse(l) as object));
  }
}

/** Waits until the write-ahead log holds at most 16 MiB (the compactor has caught up), at most `maxSeconds`. */
export async function waitCompacted(ep: Endpoints, maxSeconds = 600): Promise<void> {
  // The write-ahead log empties as the compactor catches up (closed segments are released).
  for (let i = 0; i < maxSeconds * 10 && (ep.stats().storage?.walBytes ?? 0) > 16 * 1024 * 1024; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function measureManaged(dataset: Dataset, cases: BenchCase[], runs: number, events: number, log: (line: string) => void): Promise<ManagedResult> {
  const dir = await mkdtemp(join(tmpdir(), 'le-bench-managed-'));
  try {
    log(`managed: reading the newest ${events.toLocaleString('en')} requests and ${(events / 2).toLocaleString('en')} invocations`);
    const edge = await lastLines(dataset.ndjson.edgeLogs, events);
    const functions = await lastLines(dataset.ndjson.functionEdgeLogs, events / 2);

    // The same events compacted by hand.
    await writeLines(join(dir, 'edge.ndjson'), edge);
    await writeLines(join(dir, 'functions.ndjson'), functions);
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'edge.ndjson'), outDir: join(dir, 'by-hand', 'edge') });
    await compactLogs({ source: 'functionEdgeLogs', inputs: join(dir, 'functions.ndjson'), outDir: join(dir, 'by-hand', 'functions') });

    log('managed: ingesting them through ep.ingest, then waiting for the background compactor');
    const managed = await createEndpoints({ storage: { dataDir: join(dir, 'data') }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 } });
    const byHand = await createEndpoints({
      sources: { edgeLogs: join(dir, 'by-hand', 'edge'), functionEdgeLogs: join(dir, 'by-hand', 'functions') },
      now: () => REFERENCE, cache: false, duckdb: { threads: 2 },
    });
    try {
      await ingestAll(managed, 'cloudflare.logs.prod', edge);
      await ingestAll(managed, 'deno-relay-logs', functions);
      await waitCompacted(managed);

      log(`managed: ${((managed.stats().storage?.walBytes ?? 0) / 2 ** 20).toFixed(1)} MiB of write-ahead log not compacted yet`);
      for (const source of ['edgeLogs', 'functionEdgeLogs'] as const) {
        const files = [...readDatasetState(join(dir, 'data', source, 'parquet')).files.values()];
        const days = new Set(files.map((f) => f.day)).size;
        log(`managed: ${source}: ${files.length} data files over ${days} days`);
      }

      const warm = async (ep: Endpoints, c: BenchCase) => {
        await ep.query(c.endpoint as string, c.params);
        const sample: number[] = [];
        for (let i = 0; i < runs; i++) sample.push(await timeMs(() => ep.query(c.endpoint as string, c.params)));
        return summarize(sample);
      };
      // Before the writer starts: the layout alone, without ingest and compaction sharing the cores.
      const idle = new Map<string, Timing>();
      for (const c of cases) idle.set(c.name, await warm(managed, c));

      // A writer that keeps ingesting (batches of 100, one after the other) while queries run.
      let writing = true;
      let ingested = 0;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const batch = Array.from({ length: 100 }, (_, k) => ({
            message: `GET | 200 | /rest/v1/live/${i}`, project: 'bench-live',
            timestamp: new Date(REFERENCE.getTime() - 60_000 + ((i * 100 + k) % 60_000)).toISOString(),
            metadata: { request: { path: '/rest/v1/live', url: 'https://bench-live.supabase.co/rest/v1/live' } },
          }));
          await managed.ingest('cloudflare.logs.prod', batch);
          ingested += batch.length;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const out: ManagedCase[] = [];
      try {
        for (const c of cases) {
          const m = await warm(managed, c);
          const h = await warm(byHand, c);
          const i = idle.get(c.name)!;
          const ratio = (a: Timing) => Math.round((a.p50_ms / h.p50_ms) * 100) / 100;
          out.push({ name: c.name, managed_idle: i, managed: m, compacted: h, ratio: ratio(m), ratio_idle: ratio(i) });
          log(`  ${c.name}: managed ${m.p50_ms} ms while ingesting, ${i.p50_ms} ms idle; by hand ${h.p50_ms} ms`);
        }
      } finally {
        writing = false;
        await writer;
      }
      return { events, ingested_while_querying: ingested, cases: out };
    } finally {
      await managed.close();
      await byHand.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function managedMarkdown(r: ManagedResult): string[] {
  return [
    `Managed storage (${r.events.toLocaleString('en')} requests ingested and compacted in the background; ${r.ingested_while_querying.toLocaleString('en')} more ingested while the cases ran) against the same events compacted by hand, warm p50 (target ≤ 1.2):`,
    '',
    '| case | managed, while ingesting | managed, idle | compacted by hand | ratio while ingesting | ratio idle |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.cases.map((c) => `| ${c.name} | ${c.managed.p50_ms} | ${c.managed_idle.p50_ms} | ${c.compacted.p50_ms} | ${c.ratio} | ${c.ratio_idle} |`),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '20' } } });
  const { prepareDataset } = await import('./dataset');
  const { benchCases } = await import('./cases');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dataset = await prepareDataset('default', log);
  const result = await measureManaged(dataset, benchCases(dataset.projects[0]!, 1), Number(values.runs), Number(values.events), log);
  process.stdout.write(`${managedMarkdown(result).join('\n')}\n`);
}
