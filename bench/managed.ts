/**
 * Queries on managed storage while it ingests, side by side with the same events compacted by
 * hand (`compact`, one run): the cost of letting the library own the data. The newest N events of
 * the benchmark dataset are ingested through `ep.ingest` (batches of 1000), the background
 * compactor turns them into the dataset (the run waits until it has nothing left to do), the
 * answers of both are compared, then every case is timed warm, idle and while a writer keeps
 * ingesting new events (batches of 100, one after the other with 20 ms between them, each
 * fsynced), managed and by hand in the same rounds. Target: within 1.2x.
 *
 * `npm run bench` runs the section in a process of its own (`measureManagedApart`), as the seed's
 * cases run the library (bench/library-process.ts): in the bench's process, beside its peers'
 * memory, both sides trimmed their allocator after nearly every call, which an application
 * holding only the library's memory does not (docs/performance.md, "The live path in a process of
 * its own").
 *
 *   npm run bench                                    (part of the full run)
 *   npx tsx bench/managed.ts [--events 1000000] [--project-rank 1,6] [--json out.json]   (on its own, after the dataset exists)
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { createEndpoints, type Endpoints } from '../src/index';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetState, readDatasetStateStable } from '../src/dataset/dataset-log';
import { daySettled, SETTLE_QUIET_MS, settledFilesToMerge } from '../src/managed/merge-policy';
import type { BenchCase } from './cases';
import { REFERENCE, type Dataset } from './dataset';
import { peakRssMb } from './serve-process';
import { summarize, timeMs, type Timing } from './stats';

export interface ManagedCase {
  name: string;
  /** Managed storage with nothing being ingested: what its layout costs on its own. */
  managed_idle: Timing;
  /** The files compacted by hand, timed in the same rounds as `managed_idle`. */
  compacted_idle: Timing;
  managed: Timing;
  /** The files compacted by hand, timed in the same rounds as `managed` (while the writer ingests). */
  compacted: Timing;
  ratio: number;
  ratio_idle: number;
}

export interface ManagedResult {
  events: number;
  /** Events acknowledged by the background writer while the cases ran. */
  ingested_while_querying: number;
  /** What managed storage held when the cases started: data files per day, per source, and the write-ahead log not compacted yet. */
  layout: { files: Record<string, Record<string, number>>; wal_mib: number };
  /** Cases whose p95 / p99 differed (merged quantile summaries of other files: within the rank bound, docs/semantics.md); every other value is equal. */
  quantile_differences: string[];
  cases: ManagedCase[];
  /** The peak (VmHWM, MiB) of the process the section ran in, when it ran in one of its own. */
  process_vmhwm_mib?: number;
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

/**
 * An event of the generator's NDJSON as an object that keeps its timestamp exactly: a nanosecond
 * integer past 2^53 becomes its text (a number or numeric text are the same timestamp to ingest),
 * as JSON.parse would round it to another microsecond than `compact` reads.
 */
function parseEvent(line: string): object {
  return JSON.parse(line.replace(/"timestamp":(-?\d{16,})/, '"timestamp":"$1"')) as object;
}

async function ingestAll(ep: Endpoints, source: string, lines: string[]): Promise<void> {
  for (let i = 0; i < lines.length; i += 1000) {
    await ep.ingest(source, lines.slice(i, i + 1000).map(parseEvent));
  }
}

/**
 * The live writer's `i`-th batch: 100 gateway events of one project in the reference's last minute
 * (the events of the bench's week are older), as the managed cases ingest while they are asked.
 */
export function liveBatch(i: number): Array<Record<string, unknown>> {
  return Array.from({ length: 100 }, (_, k) => ({
    message: `GET | 200 | /rest/v1/live/${i}`,
    project: 'bench-live',
    timestamp: new Date(REFERENCE.getTime() - 60_000 + ((i * 100 + k) % 60_000)).toISOString(),
    metadata: { request: { path: '/rest/v1/live', url: 'https://bench-live.supabase.co/rest/v1/live' } },
  }));
}

/**
 * Until the compactor has nothing left to do: the write-ahead log drained (at most 16 MiB left,
 * waited for at most `maxSeconds`), then no compaction or merge for 3 s; then, a minute after the
 * last file was written (`SETTLE_QUIET_MS`), the days before today are settled and their files
 * merged into one (in parts only after a merge ran out of memory): the compactor's own timer runs
 * then, and this waits for it too.
 */
export async function waitCompacted(ep: Endpoints, maxSeconds = 600, dataDir?: string): Promise<void> {
  await waitQuiet(ep, maxSeconds);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_QUIET_MS + 2000));
  await waitQuiet(ep, maxSeconds);
  // The settled days' merges, seen in the datasets' logs (a merge may outlast the 3 quiet seconds).
  const pending = () =>
    (['edgeLogs', 'functionEdgeLogs'] as const).some((source) => {
      const dir = join(dataDir!, source, 'parquet');
      if (!existsSync(dir)) return false;
      const files = [...readDatasetStateStable(dir).files.values()];
      return files.some((f) => f.day !== null && daySettled(f.day, REFERENCE.getTime(), Infinity) && settledFilesToMerge(files.filter((g) => g.day === f.day)).length > 0);
    });
  const fileCount = () =>
    (['edgeLogs', 'functionEdgeLogs'] as const).reduce(
      (n, source) => n + (existsSync(join(dataDir!, source, 'parquet')) ? readDatasetStateStable(join(dataDir!, source, 'parquet')).files.size : 0),
      0,
    );
  // A day merged in parts (after a merge out of memory, merge-policy.ts) may stay in several
  // files: once no merge has changed the files for 30 s, the compactor is done with them.
  for (let i = 0, files = -1, still = 0; dataDir !== undefined && pending() && still < 30; i++) {
    if (i >= maxSeconds) throw new Error(`managed: the days before ${REFERENCE.toISOString()} were not merged within ${maxSeconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = fileCount();
    still = now === files ? still + 1 : 0;
    files = now;
  }
}

async function waitQuiet(ep: Endpoints, maxSeconds: number): Promise<void> {
  // The write-ahead log empties as the compactor catches up (closed segments are released).
  for (let i = 0; i < maxSeconds * 10 && (ep.stats().storage?.walBytes ?? 0) > 16 * 1024 * 1024; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let last = '';
  for (let quiet = 0, i = 0; quiet < 3 && i < 600; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const s = ep.stats().storage!;
    const now = `${s.compactedSegments} ${s.mergedFiles} ${s.walBytes}`;
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * The answers of managed storage and of the same events compacted by hand, compared before any
 * timing: every row and value equal, but p95 / p99 of invocation-stats, which merged quantile
 * summaries of other files may place elsewhere inside their rank bound. Returns whether they did.
 */
function compareManaged(c: BenchCase, managed: readonly Record<string, unknown>[], byHand: readonly Record<string, unknown>[]): boolean {
  const quantiles = new Set(['p95_execution_time', 'p99_execution_time']);
  let differed = false;
  if (managed.length !== byHand.length) throw new Error(`managed: ${c.name}: ${managed.length} rows, by hand ${byHand.length}`);
  managed.forEach((row, i) => {
    for (const key of new Set([...Object.keys(row), ...Object.keys(byHand[i]!)])) {
      const a = row[key],
        b = byHand[i]![key];
      if (isDeepStrictEqual(a, b) || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)))) continue;
      if (
        c.endpoint === 'functions.invocation-stats' &&
        quantiles.has(key) &&
        typeof a === 'number' &&
        typeof b === 'number' &&
        a >= Number(row.min_execution_time) &&
        a <= Number(row.max_execution_time)
      ) {
        differed = true;
        continue;
      }
      throw new Error(`managed: ${c.name}: row ${i} ${key} is ${JSON.stringify(a)} on managed storage, ${JSON.stringify(b)} compacted by hand`);
    }
  });
  return differed;
}

export async function measureManaged(ndjson: Dataset['ndjson'], cases: BenchCase[], runs: number, events: number, log: (line: string) => void): Promise<ManagedResult> {
  const dir = await mkdtemp(join(tmpdir(), 'le-bench-managed-'));
  try {
    log(`managed: reading the newest ${events.toLocaleString('en')} requests and ${(events / 2).toLocaleString('en')} invocations`);
    const edge = await lastLines(ndjson.edgeLogs, events);
    const functions = await lastLines(ndjson.functionEdgeLogs, events / 2);

    // The same events compacted by hand.
    await writeLines(join(dir, 'edge.ndjson'), edge);
    await writeLines(join(dir, 'functions.ndjson'), functions);
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'edge.ndjson'), outDir: join(dir, 'by-hand', 'edge') });
    await compactLogs({ source: 'functionEdgeLogs', inputs: join(dir, 'functions.ndjson'), outDir: join(dir, 'by-hand', 'functions') });

    log('managed: ingesting them through ep.ingest, then waiting for the background compactor');
    const managed = await createEndpoints({ storage: { dataDir: join(dir, 'data') }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 } });
    const byHand = await createEndpoints({
      sources: { edgeLogs: join(dir, 'by-hand', 'edge'), functionEdgeLogs: join(dir, 'by-hand', 'functions') },
      now: () => REFERENCE,
      cache: false,
      duckdb: { threads: 2 },
    });
    try {
      await ingestAll(managed, 'cloudflare.logs.prod', edge);
      await ingestAll(managed, 'deno-relay-logs', functions);
      await waitCompacted(managed, 600, join(dir, 'data'));

      const walMib = Math.round(((managed.stats().storage?.walBytes ?? 0) / 2 ** 20) * 10) / 10;
      log(`managed: ${walMib} MiB of write-ahead log not compacted yet`);
      const files: Record<string, Record<string, number>> = {};
      for (const source of ['edgeLogs', 'functionEdgeLogs'] as const) {
        const perDay: Record<string, number> = {};
        for (const f of readDatasetState(join(dir, 'data', source, 'parquet')).files.values()) perDay[f.day ?? '?'] = (perDay[f.day ?? '?'] ?? 0) + 1;
        files[source] = Object.fromEntries(Object.entries(perDay).sort());
        log(`managed: ${source}: data files per day ${JSON.stringify(files[source])}`);
      }

      // Answers first: a timing of another answer would mean nothing.
      const quantileDifferences: string[] = [];
      for (const c of cases) {
        const m = (await managed.query(c.endpoint as string, c.params)).result as Record<string, unknown>[];
        const h = (await byHand.query(c.endpoint as string, c.params)).result as Record<string, unknown>[];
        if (compareManaged(c, m, h)) quantileDifferences.push(c.name);
      }
      log(`managed: answers equal for ${cases.length} cases${quantileDifferences.length ? ` (p95/p99 inside their bound elsewhere in ${quantileDifferences.length})` : ''}`);

      /** Warm p50 of managed storage and of the files compacted by hand, in the same rounds (the order turning each round). */
      const sideBySide = async (c: BenchCase) => {
        await managed.query(c.endpoint as string, c.params);
        await byHand.query(c.endpoint as string, c.params);
        const m: number[] = [],
          h: number[] = [];
        for (let i = 0; i < runs; i++) {
          for (const which of i % 2 ? ['managed', 'byHand'] : ['byHand', 'managed']) {
            if (which === 'managed') m.push(await timeMs(() => managed.query(c.endpoint as string, c.params)));
            else h.push(await timeMs(() => byHand.query(c.endpoint as string, c.params)));
          }
        }
        return { managed: summarize(m), byHand: summarize(h) };
      };
      // Before the writer starts: the layout alone, without ingest and compaction sharing the cores.
      // Each ratio is taken against the files compacted by hand timed in the same rounds: the
      // process is not as fast in both phases (a ratio of idle managed storage to the hand-compacted
      // files timed while the writer ran read 1.44 - 1.62 for logs.all's first page, where the two
      // timed side by side idle take the same).
      const idle = new Map<string, { managed: Timing; byHand: Timing }>();
      for (const c of cases) idle.set(c.name, await sideBySide(c));

      // A writer that keeps ingesting (batches of 100, one after the other) while queries run.
      let writing = true;
      let ingested = 0;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const batch = liveBatch(i);
          await managed.ingest('cloudflare.logs.prod', batch);
          ingested += batch.length;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const out: ManagedCase[] = [];
      try {
        for (const c of cases) {
          const { managed: m, byHand: h } = await sideBySide(c);
          const i = idle.get(c.name)!;
          const ratio = (a: Timing, b: Timing) => Math.round((a.p50_ms / b.p50_ms) * 100) / 100;
          out.push({ name: c.name, managed_idle: i.managed, compacted_idle: i.byHand, managed: m, compacted: h, ratio: ratio(m, h), ratio_idle: ratio(i.managed, i.byHand) });
          log(`  ${c.name}: managed ${m.p50_ms} ms while ingesting (by hand ${h.p50_ms} ms), ${i.managed.p50_ms} ms idle (by hand ${i.byHand.p50_ms} ms)`);
        }
      } finally {
        writing = false;
        await writer;
      }
      return { events, ingested_while_querying: ingested, layout: { files, wal_mib: walMib }, quantile_differences: quantileDifferences, cases: out };
    } finally {
      await managed.close();
      await byHand.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `measureManaged` in a new process of this script (the bench's loader and flags), as
 * `measureParseApart` runs the parse: its cases and files handed over in a file, its log on
 * stderr, its result (with the process's peak) read back.
 */
export function measureManagedApart(ndjson: Dataset['ndjson'], cases: BenchCase[], runs: number, events: number): ManagedResult {
  const dir = mkdtempSync(join(tmpdir(), 'bench-managed-'));
  try {
    const input = join(dir, 'input.json');
    const out = join(dir, 'managed.json');
    writeFileSync(input, JSON.stringify({ ndjson, cases }));
    const args = [...process.execArgv, fileURLToPath(import.meta.url), '--input', input, '--runs', String(runs), '--events', String(events), '--json', out];
    const child = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (child.status !== 0) throw new Error(`bench/managed.ts exited with ${child.status ?? child.signal}`);
    return JSON.parse(readFileSync(out, 'utf8')) as ManagedResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function managedMarkdown(r: ManagedResult): string[] {
  const days = (files: Record<string, number>) =>
    Object.entries(files)
      .map(([day, n]) => `${day.slice(5)}: ${n}`)
      .join(', ');
  return [
    `Managed storage (${r.process_vmhwm_mib === undefined ? '' : `in a process of its own, peak ${r.process_vmhwm_mib} MiB; `}${r.events.toLocaleString('en')} requests and ${(r.events / 2).toLocaleString('en')} invocations ingested and compacted in the background; ${r.ingested_while_querying.toLocaleString('en')} more ingested while the cases ran) against the same events compacted by hand, warm p50, the two in the same rounds (target ≤ 1.2). Answers compared first: equal${r.quantile_differences.length ? ` (p95/p99 elsewhere inside their bound: ${r.quantile_differences.join('; ')})` : ''}.`,
    `Data files per day when the cases started: gateway log ${days(r.layout.files.edgeLogs ?? {})}; edge-function log ${days(r.layout.files.functionEdgeLogs ?? {})}; ${r.layout.wal_mib} MiB of write-ahead log not compacted yet.`,
    '',
    '| case | managed, while ingesting | compacted by hand, same rounds | ratio while ingesting | managed, idle | compacted by hand, same rounds | ratio idle |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.cases.map((c) => `| ${c.name} | ${c.managed.p50_ms} | ${c.compacted.p50_ms} | ${c.ratio} | ${c.managed_idle.p50_ms} | ${c.compacted_idle.p50_ms} | ${c.ratio_idle} |`),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '20' },
      'project-rank': { type: 'string', default: '1,6' },
      input: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // --input: the files and cases `measureManagedApart` hands over; without it, the default dataset's.
  const { ndjson, cases } = values.input
    ? (JSON.parse(readFileSync(values.input, 'utf8')) as { ndjson: Dataset['ndjson']; cases: BenchCase[] })
    : await (async () => {
        const dataset = await (await import('./dataset')).prepareDataset('default', log);
        const { benchCases } = await import('./cases');
        return { ndjson: dataset.ndjson, cases: values['project-rank']!.split(',').flatMap((rank) => benchCases(dataset.projects[Number(rank) - 1]!, Number(rank))) };
      })();
  const result = await measureManaged(ndjson, cases, Number(values.runs), Number(values.events), log);
  if (values.json) writeFileSync(values.json, JSON.stringify({ ...result, process_vmhwm_mib: peakRssMb(process.pid) }));
  else process.stdout.write(`${managedMarkdown(result).join('\n')}\n`);
}
