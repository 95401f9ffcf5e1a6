/**
 * npm run bench:clickhouse -- [--scale tiny|small|default] [--runs 20] [--json out.json]
 *                             [--url http://host:8123 --cluster <name> --database <db>]
 *
 * The three endpoints on ClickHouse (a `Distributed` table over two shards) side by side with the
 * library's DuckDB over the same data (the Parquet layout), plus load throughput (NDJSON files
 * into the cluster). Without --url it starts two local clickhouse-server processes on loopback,
 * as the integration tests do: one machine then plays both shards, which says how the engines
 * compare, not what a real cluster does.
 */
import { stat, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { clickhouseEngine, clickhouseLoader } from '../src/clickhouse';
import { createEndpoints } from '../src/index';
import { startClickHouseCluster } from '../test/integration/support/clickhouse-cluster';
import { benchCases } from './cases';
import { prepareDataset, REFERENCE, SCALES, type Scale } from './dataset';
import { measureLibrary } from './library';
import { LibraryProcess } from './library-process';
import { round, summarize, timeMs, type Timing } from './stats';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: 'tiny' },
    runs: { type: 'string', default: '20' },
    json: { type: 'string' },
    url: { type: 'string', multiple: true },
    cluster: { type: 'string' },
    database: { type: 'string', default: 'log_endpoints_bench' },
  },
});
const scale = values.scale as Scale;
if (!(scale in SCALES)) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(', ')}`);
const runs = Math.max(1, Number(values.runs));
const log = (line: string) => process.stderr.write(`${line}\n`);

const dataset = await prepareDataset(scale, log);
const local = values.url?.length ? null : await startClickHouseCluster({ name: 'bench' });
const urls = values.url?.length ? values.url : local!.shards.map((s) => s.url);
const target = { database: values.database!, ...(local ? { cluster: local.name } : values.cluster ? { cluster: values.cluster } : {}) };
try {
  log(`clickhouse: ${local ? `local 2-shard cluster (${urls.join(', ')})` : urls[0]}`);
  for (const url of urls) {
    const loader = clickhouseLoader({ ...target, url });
    await loader.init();
    await loader.close();
  }

  // Load throughput: the NDJSON files, read by DuckDB, inserted in RowBinary batches.
  const loads: Array<{ source: string; rows: number; mb: number; seconds: number; rows_per_s: number; mb_per_s: number }> = [];
  const loader = clickhouseLoader({ ...target, url: urls[0]! });
  for (const [source, file] of [
    ['edgeLogs', dataset.ndjson.edgeLogs],
    ['functionEdgeLogs', dataset.ndjson.functionEdgeLogs],
  ] as const) {
    const mb = (await stat(file)).size / 2 ** 20;
    let rows = 0;
    const ms = await timeMs(async () => (rows = (await loader.load(source, file)).rows));
    loads.push({ source, rows, mb: round(mb, 1), seconds: round(ms / 1000), rows_per_s: Math.round(rows / (ms / 1000)), mb_per_s: round(mb / (ms / 1000), 1) });
    log(`load ${source}: ${rows} rows in ${round(ms / 1000)} s`);
  }
  await loader.close();

  const cases = benchCases(dataset.projects[0]!, 1);
  const results: Array<{ name: string; variant: string } & Timing> = [];
  const ch = await createEndpoints({ sources: {}, engine: clickhouseEngine({ ...target, url: urls[0]! }), now: () => REFERENCE, cache: false });
  const library = LibraryProcess.start();
  try {
    for (const c of cases) {
      log(`case: ${c.name}`);
      const duck = await measureLibrary(library, dataset.parquet, c, runs);
      results.push({ name: c.name, variant: 'duckdb-parquet (warm)', ...summarize(duck.warm) });
      await ch.query(c.endpoint as string, c.params);
      const warm: number[] = [];
      for (let i = 0; i < runs; i++) warm.push(await timeMs(() => ch.query(c.endpoint as string, c.params)));
      results.push({ name: c.name, variant: 'clickhouse-2-shards (warm)', ...summarize(warm) });
    }
  } finally {
    await library.stop();
    await ch.close();
  }

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const lines = [
    `ClickHouse vs DuckDB, scale ${scale} (${SCALES[scale].edgeEvents} edge, ${SCALES[scale].functionEvents} function events), ${machine}`,
    '',
    '| case | engine | p50 ms | p95 ms | runs |',
    '|---|---|---:|---:|---:|',
    ...results.map((r) => `| ${r.name} | ${r.variant} | ${r.p50_ms} | ${r.p95_ms} | ${r.runs} |`),
    '',
    '| load (NDJSON → ClickHouse) | rows | MB | s | rows/s | MB/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...loads.map((l) => `| ${l.source} | ${l.rows} | ${l.mb} | ${l.seconds} | ${l.rows_per_s} | ${l.mb_per_s} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (values.json) await writeFile(values.json, JSON.stringify({ scale, machine, results, loads }, null, 2));
} finally {
  if (local) await local.stop();
  else {
    log(`the bench tables stay in database ${target.database}; drop it when done`);
  }
}
