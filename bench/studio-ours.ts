import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { compactLogs, createEndpoints, supabasePreset, type Endpoints } from '../src/index';
import { memoryBudget } from '../src/duckdb/memory-budget';
import type { StudioRequest } from '../test/support/supabase/studio-requests';
import { LOG_TABLES, sourceNameOf } from '../test/support/supabase/vector-sources';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { datasetDir } from '../src/managed/managed-inputs';
import { REFERENCE } from './dataset';
import { waitCompacted } from './managed';
import type { StudioData } from './studio-data';
import { round } from './stats';

/**
 * Ours for the Studio cases: `createEndpoints({ ...supabasePreset, storage: { dataDir } })` (what
 * `serve --supabase` runs), the week ingested through `ep.ingest` as Vector's feeds (batches of
 * 1,000), compacted by the background compactor. The data directory (`<data>/managed`) is kept and
 * reused by later runs once ingested and compacted.
 *
 * With `typedColumns: false` the Parquet holds `metadata` alone (docs/durability.md, "Typed
 * columns"), in `<data>/managed-json-only`: a second copy of the same week for the layouts'
 * comparison (bench/studio-layouts.ts), written by `compactLogs({ typedColumns: false })` from the
 * week's NDJSON into each source's dataset of that data dir rather than ingested again. The events
 * are stored as ingest stores them (each already has its id and timestamp), compaction writes
 * them in the layout and with the code the background compactor uses, and the bench compares
 * every answer of the two copies before timing them; ingesting the week twice cost the layouts'
 * first run a second ingest and background compaction of the whole week.
 */

export interface Ours {
  /** The rows of Studio's request, as `logs.all` answers them (Logflare's wire format). */
  answer(request: Pick<StudioRequest, 'sql' | 'iso_timestamp_start' | 'iso_timestamp_end'>): Promise<Array<Record<string, unknown>>>;
  /** Starts ingesting batches of 100 gateway events; `stop` resolves to how many were acknowledged. */
  startWriter(): { stop(): Promise<number> };
  close(): Promise<void>;
  /** Seconds this open spent making the data directory (ingest or compaction), or null when an earlier run's was reused. */
  madeInSeconds: number | null;
}

/** What the guard of ours allows the bench process beyond what it holds when ours opens. */
const BENCH_HEADROOM_BYTES = 6 * 2 ** 30;

/** The week compacted by `compactLogs` into each source's dataset of `dataDir` (where managed storage keeps it). */
async function compactFeeds(dataDir: string, data: StudioData, typedColumns: boolean, log: (line: string) => void): Promise<void> {
  // compactLogs takes the data dir's lock, whose file is written inside it.
  await mkdir(dataDir, { recursive: true });
  for (const table of LOG_TABLES) {
    const started = Date.now();
    const source = supabasePreset.sourceDefinitions.find((d) => d.relation === table)!.name;
    const { rows } = await compactLogs({
      source,
      sourceDefinitions: supabasePreset.sourceDefinitions,
      inputs: data.files[table],
      outDir: datasetDir(dataDir, source),
      typedColumns,
      duckdb: { threads: 2 },
    });
    if (rows !== data.counts[table]) throw new Error(`ours: compacted ${rows} ${table} events of ${data.counts[table]}`);
    // One file a day, as the ingested copy holds once its days are merged: nothing for the
    // instance's compactor to merge while it is timed, so it need not wait for one.
    const days = [...readDatasetStateStable(datasetDir(dataDir, source)).files.values()].map((f) => f.day);
    if (new Set(days).size !== days.length) throw new Error(`ours: compacting ${table} wrote more than one file for a day; the copy would be merged while timed`);
    log(`ours: compacted ${rows.toLocaleString('en')} ${table} in ${Math.round((Date.now() - started) / 1000)} s`);
  }
}

/**
 * Ingests a batch as a shipper does: a `503 overloaded` (the write-ahead log at its bound until
 * compaction catches up) is retried after the seconds it asks for, as Vector retries it.
 */
async function ingestLikeAShipper(ep: Endpoints, source: string, batch: object[]): Promise<number> {
  for (let waited = 0; ; ) {
    try {
      await ep.ingest(source, batch);
      return waited;
    } catch (error) {
      const e = error as { code?: string; retryAfterSeconds?: number };
      if (e.code !== 'overloaded') throw error;
      const seconds = e.retryAfterSeconds ?? 1;
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      waited += seconds;
    }
  }
}

async function ingestFeeds(ep: Endpoints, data: StudioData, log: (line: string) => void): Promise<void> {
  for (const table of LOG_TABLES) {
    const started = Date.now();
    const lines = createInterface({ input: createReadStream(data.files[table]), crlfDelay: Infinity });
    let batch: object[] = [];
    let waited = 0;
    for await (const line of lines) {
      if (line === '') continue;
      batch.push(JSON.parse(line) as object);
      if (batch.length === 1000) {
        waited += await ingestLikeAShipper(ep, sourceNameOf(table), batch);
        batch = [];
      }
    }
    if (batch.length) waited += await ingestLikeAShipper(ep, sourceNameOf(table), batch);
    if (waited) log(`ours: ${table}: the write-ahead log was full (compaction behind) for ${waited} s of it, retried as a shipper retries`);
    log(`ours: ingested ${data.counts[table].toLocaleString('en')} ${table} in ${Math.round((Date.now() - started) / 1000)} s`);
  }
}

export async function openOurs(data: StudioData, log: (line: string) => void, layout: { typedColumns: boolean } = { typedColumns: true }): Promise<Ours> {
  const name = layout.typedColumns ? 'managed' : 'managed-json-only';
  const dataDir = join(data.dir, name);
  const marker = join(data.dir, `${name}-ingested.json`);
  // The layout is in the marker: a folder compacted before typed columns existed is ingested again;
  // and where the writer dates its events, so a folder holding events of a writer of before, inside
  // the 7-day ranges, is too; and a typed layout ingested before compaction discovered fields.
  const expected = JSON.stringify({ ...data.counts, typedColumns: layout.typedColumns, writer: 'before-the-week', ...(layout.typedColumns ? { discovered: true } : {}) });
  const fresh = !(existsSync(marker) && (await readFile(marker, 'utf8')) === expected);
  // Ingested again from nothing: what an earlier run left would be read twice.
  if (fresh) await rm(dataDir, { recursive: true, force: true });
  const making = Date.now();
  // The JSON-only copy is compacted before the instance opens: compactLogs takes the data dir's lock.
  if (fresh && !layout.typedColumns) {
    log(`ours: compacting the week without typed columns into ${dataDir}`);
    await compactFeeds(dataDir, data, false, log);
    await writeFile(marker, expected);
  }
  // The process's budget is the bench's, not ours alone: this process also holds the week's
  // reader, what ingesting 10 M events in it left in its heaps, chdb in process with the week
  // loaded, and in `npm run bench` every earlier phase's peers, so at the default 512 MiB the
  // guard stopped ours' 7-day charts for memory the bench holds, and at a fixed 2 GB the full run
  // died on its Studio section. The guard is given what the process holds when ours opens plus
  // 6 GiB, room for chdb's week loaded later in the same process (ours alone answers the week's
  // 7-day kinds under `serve --supabase`'s default 512 MiB: docs/performance.md). DuckDB keeps the queries' share of the default budget (214MB), as
  // `serve --supabase` runs it.
  const open = () =>
    createEndpoints({
      ...supabasePreset,
      storage: { dataDir, typedColumns: layout.typedColumns },
      now: () => REFERENCE,
      cache: false,
      memoryLimit: `${Math.ceil((process.memoryUsage().rss + BENCH_HEADROOM_BYTES) / 1e6)}MB`,
      duckdb: { threads: 2, memoryLimit: memoryBudget().queries.memoryLimit },
    });
  let ep = await open();
  try {
    if (!fresh) {
      log(`ours: reusing the managed storage in ${dataDir}`);
    } else if (layout.typedColumns) {
      log(`ours: ingesting the week into managed storage (${dataDir})`);
      await ingestFeeds(ep, data, log);
      await writeFile(marker, expected);
    }
    // The JSON-only copy has no write-ahead log and a file a day (compactFeeds): nothing to wait for.
    if (layout.typedColumns) {
      const started = Date.now();
      // 10 M events leave the compactor more to do than bench/managed.ts's million: up to an hour.
      await waitCompacted(ep, 3600);
      log(`ours: compacted ${Math.round((Date.now() - started) / 1000)} s after the last batch`);
    }
    if (fresh && layout.typedColumns) {
      // The fields compaction discovered are read as columns from the next open on
      // (docs/durability.md, "Discovered fields"): opened again, as a later run would find it.
      await ep.close();
      ep = await open();
    }
  } catch (error) {
    await ep.close();
    throw error;
  }
  return {
    madeInSeconds: fresh ? round((Date.now() - making) / 1000, 1) : null,
    async answer(request) {
      const params = { project: 'default', iso_timestamp_start: request.iso_timestamp_start, iso_timestamp_end: request.iso_timestamp_end };
      const { result } = await ep.query('logs.all', params, { sql: request.sql });
      return result as Array<Record<string, unknown>>;
    },
    startWriter: () => studioWriter(ep),
    close: () => ep.close(),
  };
}

/**
 * A writer ingesting batches of 100 gateway events into `ep` every 20 ms until stopped (what the
 * Studio bench times "while ingesting" beside): a day before the week, outside every Studio range,
 * the 7-day kinds' too, so the answers stay those compared (in this run and in the later runs that
 * reuse the data directory), while the write-ahead log and the compactor work as usual. (Two days
 * back, as before, was inside the 7-day ranges: a reused directory answered them with an earlier
 * run's writer's events.) `stop` resolves with the events acknowledged.
 *
 * @example
 * const writer = studioWriter(ep);
 * const acknowledged = await writer.stop();
 */
export function studioWriter(ep: Endpoints): { stop(): Promise<number> } {
  let writing = true;
  let acknowledged = 0;
  const at = REFERENCE.getTime() - 8 * 86_400_000;
  const loop = (async () => {
    for (let i = 0; writing; i++) {
      const batch = Array.from({ length: 100 }, (_, k) => ({
        event_message: `GET | 200 | 172.18.0.1 | /rest/v1/live?n=${i * 100 + k}`,
        project: 'default',
        appname: 'supabase-kong',
        timestamp: new Date(at + ((i * 100 + k) % 60_000)).toISOString(),
        metadata: { request: { method: 'GET', path: '/rest/v1/live' }, response: { status_code: 200 } },
      }));
      await ep.ingest('cloudflare.logs.prod', batch);
      acknowledged += batch.length;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      writing = false;
      await loop;
      return acknowledged;
    },
  };
}
