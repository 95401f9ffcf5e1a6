import { createReadStream, existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createEndpoints, supabasePreset, type Endpoints } from '../src/index';
import type { StudioRequest } from '../test/support/supabase/studio-requests';
import { LOG_TABLES, sourceNameOf } from '../test/support/supabase/vector-sources';
import { REFERENCE } from './dataset';
import { waitCompacted } from './managed';
import type { StudioData } from './studio-data';

/**
 * Ours for the Studio cases: `createEndpoints({ ...supabasePreset, storage: { dataDir } })` (what
 * `serve --supabase` runs), the week ingested through `ep.ingest` as Vector's feeds (batches of
 * 1,000), compacted by the background compactor. The data directory (`<data>/managed`) is kept and
 * reused by later runs once ingested and compacted. With `typedColumns: false` the Parquet holds
 * `metadata` alone (docs/durability.md, "Typed columns"), in `<data>/managed-json-only`.
 */

export interface Ours {
  /** The rows of Studio's request, as `logs.all` answers them (Logflare's wire format). */
  answer(request: StudioRequest): Promise<Array<Record<string, unknown>>>;
  /** Starts ingesting batches of 100 gateway events; `stop` resolves to how many were acknowledged. */
  startWriter(): { stop(): Promise<number> };
  close(): Promise<void>;
}

async function ingestFeeds(ep: Endpoints, data: StudioData, log: (line: string) => void): Promise<void> {
  for (const table of LOG_TABLES) {
    const started = Date.now();
    const lines = createInterface({ input: createReadStream(data.files[table]), crlfDelay: Infinity });
    let batch: object[] = [];
    for await (const line of lines) {
      if (line === '') continue;
      batch.push(JSON.parse(line) as object);
      if (batch.length === 1000) {
        await ep.ingest(sourceNameOf(table), batch);
        batch = [];
      }
    }
    if (batch.length) await ep.ingest(sourceNameOf(table), batch);
    log(`ours: ingested ${data.counts[table].toLocaleString('en')} ${table} in ${Math.round((Date.now() - started) / 1000)} s`);
  }
}

export async function openOurs(data: StudioData, log: (line: string) => void, layout: { typedColumns: boolean } = { typedColumns: true }): Promise<Ours> {
  const name = layout.typedColumns ? 'managed' : 'managed-json-only';
  const dataDir = join(data.dir, name);
  const marker = join(data.dir, `${name}-ingested.json`);
  // The layout is in the marker: a folder compacted before typed columns existed is ingested again;
  // and where the writer dates its events, so a folder holding events of a writer of before, inside
  // the 7-day ranges, is too.
  const expected = JSON.stringify({ ...data.counts, typedColumns: layout.typedColumns, writer: 'before-the-week' });
  const fresh = !(existsSync(marker) && (await readFile(marker, 'utf8')) === expected);
  // Ingested again from nothing: what an earlier run left would be read twice.
  if (fresh) await rm(dataDir, { recursive: true, force: true });
  const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir, typedColumns: layout.typedColumns }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 } });
  try {
    if (!fresh) {
      log(`ours: reusing the managed storage in ${dataDir}`);
    } else {
      log(`ours: ingesting the week into managed storage (${dataDir})`);
      await ingestFeeds(ep, data, log);
      await writeFile(marker, expected);
    }
    const started = Date.now();
    // 10 M events leave the compactor more to do than bench/managed.ts's million: up to an hour.
    await waitCompacted(ep, 3600);
    log(`ours: compacted ${Math.round((Date.now() - started) / 1000)} s after the last batch`);
  } catch (error) {
    await ep.close();
    throw error;
  }
  return {
    async answer(request) {
      const params = { project: 'default', iso_timestamp_start: request.iso_timestamp_start, iso_timestamp_end: request.iso_timestamp_end };
      const { result } = await ep.query('logs.all', params, { sql: request.sql });
      return result as Array<Record<string, unknown>>;
    },
    startWriter() {
      let writing = true;
      let acknowledged = 0;
      // A day before the week: outside every Studio range, the 7-day kinds' too, so the answers stay
      // those compared (in this run and in the later runs that reuse the data directory), while the
      // write-ahead log and the compactor work as usual. (Two days back, as before, was inside the
      // 7-day ranges: a reused directory answered them with an earlier run's writer's events.)
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
    },
    close: () => ep.close(),
  };
}
