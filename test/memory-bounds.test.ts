/**
 * The memory budget as an operator meets it (docs/operations.md): `serve --supabase` prints it, a
 * Logs Explorer join that cannot fit answers `503 memory_limit` while the process goes on answering
 * and ingesting, compaction finishes inside its share, and `/metrics` tells all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveSeed, Prng } from '../src/fixtures/prng';
import { createEndpoints } from '../src/index';
import { metricsText } from '../src/http/metrics-text';
import { RunDuckDBBytes } from '../src/duckdb/duckdb-bytes';
import { openDatabase } from '../src/duckdb/open-database';
import { CENSUS_NOW, censusEvents } from './support/census';
import { fakeLog, gatewayCompactor } from './support/fake-log';
import { spawnCli, waitForStdout } from './support/cli';
import { HANG_MS, waitUntil } from './support/hang-guard';
import { tempDir } from './support/log-files';
import { microsOf } from './support/supabase/instants';
import { BUILDERS } from './support/supabase/vector-events';

const PRIVATE = 'bounds-private';
const PUBLIC = 'bounds-public';
const EVENTS = 20_000;

/** One sample of a metric in Prometheus' text, or null. */
function sample(text: string, name: string, labels = ''): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`log_endpoints_${name}${labels} `));
  return line === undefined ? null : Number(line.split(' ')[1]);
}

describe('serve --supabase under a memory budget', () => {
  const tmp = tempDir('le-bounds-');
  let child: ReturnType<typeof spawnCli>;
  let url: string;
  const get = (path: string, key: string | null = PRIVATE) => fetch(`${url}${path}`, { headers: key ? { 'x-api-key': key } : {} });
  const explorer = async (sql: string) => {
    const query = new URLSearchParams({ project: 'default', sql, iso_timestamp_start: '', iso_timestamp_end: '' });
    return get(`/api/endpoints/query/logs.all?${query}`);
  };
  const ingest = (events: object[]) =>
    fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': PUBLIC }, body: JSON.stringify(events) });
  const metrics = async () => (await get('/metrics')).text();

  beforeAll(async () => {
    // The query time limit is far above any run: the budget, not the clock, must end the join.
    child = spawnCli(
      [
        'serve',
        '--supabase',
        '--data-dir',
        tmp.path('data'),
        '--port',
        '0',
        '--memory-limit',
        '400MiB',
        '--query-timeout-ms',
        String(HANG_MS),
        '--wal-segment-bytes',
        '1000000',
        '--wal-segment-age-ms',
        '500',
      ],
      {
        LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE,
        LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC,
      },
    );
    url = (await waitForStdout(child, /Listening on (http:\/\/\S+) /))[1]!;
    const prng = new Prng(deriveSeed(3, 'bounds'));
    const at = microsOf(new Date()) - 600_000_000;
    for (let sent = 0; sent < EVENTS; sent += 1000) {
      const response = await ingest(Array.from({ length: 1000 }, (_, i) => BUILDERS.edge_logs(prng, { micros: at + sent + i, nanos: 0 })));
      expect(response.status).toBe(200);
    }
  });
  afterAll(async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    tmp.cleanup();
  });

  it('prints the budget it runs under', () => {
    expect(child.output.stdout).toMatch(/^Memory budget 400 MiB \(--memory-limit; DuckDB: queries 167MB on 1 thread, compaction 62MB\)\.$/m);
  });

  it('compacts inside its share: the data settles, no run failed, every event is answered', async () => {
    const deadline = Date.now() + HANG_MS;
    while (sample(await metrics(), 'settled') !== 1) {
      if (Date.now() > deadline) throw new Error(`never settled: ${await metrics()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const text = await metrics();
    expect(sample(text, 'compaction_failures_total')).toBe(0);
    // Every event written once by the runs; merges count what they wrote again on top.
    expect(sample(text, 'compacted_events_total')).toBe(EVENTS);
    expect(sample(text, 'merged_events_total')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'compaction_lag_bytes', '{source="edge_logs"}')).toBe(0);
    const response = await explorer('select count(*) as n from edge_logs');
    expect(((await response.json()) as { result: Array<{ n: number }> }).result).toEqual([{ n: EVENTS }]);
  });

  it('answers a join that cannot fit with 503 memory_limit, then answers and ingests as before', async () => {
    const bomb = await explorer('select count(*) from edge_logs a, edge_logs b, edge_logs c, edge_logs d');
    expect(bomb.status).toBe(503);
    const body = (await bomb.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('memory_limit');
    expect(body.error.message).toMatch(/memory budget \(400 MiB\)/);
    expect((await get('/health', null)).status).toBe(200);
    expect((await ingest([BUILDERS.edge_logs(new Prng(1), { micros: microsOf(new Date()), nanos: 0 })])).status).toBe(200);
    const count = await explorer('select count(*) as n from edge_logs');
    expect(count.status).toBe(200);
    expect(((await count.json()) as { result: Array<{ n: number }> }).result).toEqual([{ n: EVENTS + 1 }]);
    const text = await metrics();
    expect(sample(text, 'refusals_total', '{code="memory_limit"}')).toBe(1);
    expect(sample(text, 'ingested_events_total')).toBe(EVENTS + 1);
    expect(sample(text, 'memory_budget_bytes')).toBe(400 * 2 ** 20);
    // What the queries instance holds and spilled is there, labelled by its role.
    expect(sample(text, 'duckdb_memory_bytes', '{instance="queries"}')).not.toBeNull();
    expect(sample(text, 'duckdb_temporary_bytes', '{instance="queries"}')).not.toBeNull();
  });

  it('keeps /metrics behind a query key: none is 401, an ingest key too', async () => {
    expect((await get('/metrics', null)).status).toBe(401);
    expect((await get('/metrics', PUBLIC)).status).toBe(401);
  });
});

describe("/metrics' text", () => {
  it("is Prometheus' exposition format: HELP and TYPE for each metric, labels escaped", () => {
    const text = metricsText(
      {
        engineQueries: 3,
        engineFailures: 0,
        cacheHits: 2,
        cacheMisses: 3,
        warmingRefreshes: 0,
        warmingFailures: 0,
        cacheErrors: 0,
        ingestedEvents: 10,
        repeatedEvents: 4,
        refusals: { memory_limit: 1, 'odd"code': 2 },
        warmingKeys: 0,
        memory: {
          budgetBytes: 512,
          residentBytes: 100,
          heapBytes: 60,
          externalBytes: 5,
          duckdb: [{ instance: 'queries', memoryBytes: 40, temporaryBytes: 7, tagBytes: { BASE_TABLE: 30, OBJECT_CACHE: 10 } }],
        },
      },
      200,
    );
    expect(text).toBe(
      [
        '# HELP log_endpoints_memory_budget_bytes The process memory budget (--memory-limit).',
        '# TYPE log_endpoints_memory_budget_bytes gauge',
        'log_endpoints_memory_budget_bytes 512',
        '# HELP log_endpoints_resident_bytes Resident memory of the process now (VmRSS).',
        '# TYPE log_endpoints_resident_bytes gauge',
        'log_endpoints_resident_bytes 100',
        '# HELP log_endpoints_resident_peak_bytes Highest resident memory since the start (VmHWM).',
        '# TYPE log_endpoints_resident_peak_bytes gauge',
        'log_endpoints_resident_peak_bytes 200',
        "# HELP log_endpoints_heap_bytes V8's heap (JavaScript objects).",
        '# TYPE log_endpoints_heap_bytes gauge',
        'log_endpoints_heap_bytes 60',
        "# HELP log_endpoints_external_bytes JavaScript's buffers outside V8's heap.",
        '# TYPE log_endpoints_external_bytes gauge',
        'log_endpoints_external_bytes 5',
        '# HELP log_endpoints_duckdb_memory_bytes Bytes a DuckDB instance holds in its buffer pool, by its role.',
        '# TYPE log_endpoints_duckdb_memory_bytes gauge',
        'log_endpoints_duckdb_memory_bytes{instance="queries"} 40',
        "# HELP log_endpoints_duckdb_memory_tag_bytes Of those, bytes by DuckDB's own tag (duckdb_memory()): tables, caches, a query's hash tables and sorts.",
        '# TYPE log_endpoints_duckdb_memory_tag_bytes gauge',
        'log_endpoints_duckdb_memory_tag_bytes{instance="queries",tag="BASE_TABLE"} 30',
        'log_endpoints_duckdb_memory_tag_bytes{instance="queries",tag="OBJECT_CACHE"} 10',
        '# HELP log_endpoints_duckdb_temporary_bytes Bytes a DuckDB instance spilled to its temporary directory, by its role.',
        '# TYPE log_endpoints_duckdb_temporary_bytes gauge',
        'log_endpoints_duckdb_temporary_bytes{instance="queries"} 7',
        '# HELP log_endpoints_ingested_events_total Events acknowledged.',
        '# TYPE log_endpoints_ingested_events_total counter',
        'log_endpoints_ingested_events_total 10',
        '# HELP log_endpoints_repeated_events_total Events acknowledged again without being stored (a retried body).',
        '# TYPE log_endpoints_repeated_events_total counter',
        'log_endpoints_repeated_events_total 4',
        '# HELP log_endpoints_queries_total Engine queries run (cache misses and warming).',
        '# TYPE log_endpoints_queries_total counter',
        'log_endpoints_queries_total 3',
        '# HELP log_endpoints_cache_hits_total Answers served from the cache.',
        '# TYPE log_endpoints_cache_hits_total counter',
        'log_endpoints_cache_hits_total 2',
        '# HELP log_endpoints_refusals_total Calls answered with an error, by its code.',
        '# TYPE log_endpoints_refusals_total counter',
        'log_endpoints_refusals_total{code="memory_limit"} 1',
        'log_endpoints_refusals_total{code="odd\\"code"} 2',
        '',
      ].join('\n'),
    );
  });
});

describe("what DuckDB holds, in the stats and /metrics' text", () => {
  it('reports the queries instance with the memory tables in it, from DuckDB itself, labelled by its role', async () => {
    const tmp = tempDir('le-duckdb-bytes-');
    // Segments that never close on their own: the events stay in the memory tables, inside the queries instance.
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('data'), maxSegmentAgeMs: HANG_MS, segmentQuietMs: HANG_MS }, cache: false });
    try {
      const prng = new Prng(deriveSeed(3, 'duckdb-bytes'));
      const at = microsOf(new Date());
      await ep.ingest(
        'cloudflare.logs.prod',
        Array.from({ length: 2000 }, (_, i) => BUILDERS.edge_logs(prng, { micros: at + i, nanos: 0 })),
      );
      // Read on a timer off the caller's path: wait for a reading taken since the events went in.
      await waitUntil(() => ep.stats().memory.duckdb[0]!.memoryBytes > 0);
      const [queries, ...others] = ep.stats().memory.duckdb;
      // Beside it, compaction's (the run going on, if any).
      expect(others.map((o) => o.instance)).toEqual(['compaction']);
      expect(queries).toMatchObject({ instance: 'queries', temporaryBytes: 0 });
      const text = metricsText(ep.stats());
      expect(Number(/^log_endpoints_duckdb_memory_bytes\{instance="queries"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
      expect(text).toMatch(/^log_endpoints_duckdb_temporary_bytes\{instance="queries"\} 0$/m);
      // The same bytes by DuckDB's tag: the tags holding any add up to the instance's figure.
      const tags = [...text.matchAll(/^log_endpoints_duckdb_memory_tag_bytes\{instance="queries",tag="(\w+)"\} (\d+)$/gm)];
      // The memory tables' rows are a table's blocks in DuckDB's count (in memory until checkpointed to their file).
      expect(tags.map((m) => m[1])).toContain('IN_MEMORY_TABLE');
      expect(tags.reduce((sum, m) => sum + Number(m[2]), 0)).toBe(queries!.memoryBytes);
    } finally {
      await ep.close();
      tmp.cleanup();
    }
  });
});

describe("DuckDB's caches of the files it reads", () => {
  it("keeps the Parquet footers it read, and no copy of the files' bytes (the kernel's page cache has them)", async () => {
    const tmp = tempDir('le-file-caches-');
    const db = await openDatabase({ threads: 1, memoryLimit: '80MB' });
    const held = new RunDuckDBBytes();
    const unwatch = await held.watch(db.instance);
    try {
      for (let i = 0; i < 3; i++) {
        const file = tmp.path(`f${i}.parquet`);
        await db.connection.run(`COPY (SELECT range AS n, repeat('x', 40) || range AS s FROM range(50000)) TO '${file}' (FORMAT parquet)`);
        await db.connection.run(`SELECT count(*), max(s) FROM read_parquet('${file}')`);
      }
      await held.refresh();
      expect(held.latest.tagBytes.OBJECT_CACHE).toBeGreaterThan(0);
      expect(held.latest.tagBytes.EXTERNAL_FILE_CACHE).toBeUndefined();
    } finally {
      await unwatch();
      await db.close();
      tmp.cleanup();
    }
  });
});

describe("what compaction's DuckDB holds, in the stats and /metrics' text", () => {
  it('reads a watched instance while it is open, summed with the others open, and zero once each is closed', async () => {
    const held = new RunDuckDBBytes();
    expect(held.latest).toEqual({ memoryBytes: 0, temporaryBytes: 0, tagBytes: {} });
    const first = await openDatabase({ threads: 1, memoryLimit: '80MB', held });
    const second = await openDatabase({ threads: 1, memoryLimit: '80MB', held });
    try {
      await first.connection.run("CREATE TABLE t AS SELECT range AS n, repeat('x', 50) || range AS s FROM range(200000)");
      await held.refresh();
      const own = async (db: typeof first) => Number((await db.connection.runAndReadAll('SELECT sum(memory_usage_bytes)::BIGINT FROM duckdb_memory()')).getRows()[0]![0]);
      const [a, b] = [await own(first), await own(second)];
      expect(a).toBeGreaterThan(0);
      expect(held.latest).toMatchObject({ memoryBytes: a + b, temporaryBytes: 0 });
      // Tag by tag, summed over the instances too: the table's blocks among them.
      expect(Object.values(held.latest.tagBytes).reduce((sum, n) => sum + n, 0)).toBe(a + b);
      expect(Object.keys(held.latest.tagBytes)).toContain('IN_MEMORY_TABLE');
    } finally {
      await first.close();
    }
    await held.refresh();
    expect(held.latest.memoryBytes).toBe(Number((await second.connection.runAndReadAll('SELECT sum(memory_usage_bytes)::BIGINT FROM duckdb_memory()')).getRows()[0]![0]));
    await second.close();
    expect(held.latest).toEqual({ memoryBytes: 0, temporaryBytes: 0, tagBytes: {} });
  });

  it("watches each compaction run's instance (and its merges') from its open to its close: zero between runs", async () => {
    const tmp = tempDir('le-compaction-bytes-');
    const opened: number[] = [];
    let open = 0;
    /** Counts the instances watched at once. */
    class Counting extends RunDuckDBBytes {
      override async watch(instance: Parameters<RunDuckDBBytes['watch']>[0]) {
        const release = await super.watch(instance);
        opened.push(++open);
        return async () => {
          open--;
          await release();
        };
      }
    }
    const held = new Counting();
    const wal = fakeLog(tmp.path('wal'));
    const compactor = gatewayCompactor({
      datasetDir: tmp.path('parquet'),
      walDir: tmp.path('wal'),
      wal,
      now: () => new Date(CENSUS_NOW),
      duckdb: { threads: 1, memoryLimit: '80MB', held },
      onError: (e) => {
        throw e;
      },
    });
    try {
      await compactor.settled();
      for (let i = 0; i < 9; i++) {
        wal.add(`${String(i + 1).padStart(20, '0')}.ndjson`, censusEvents(`c${i}`, 50));
        wal.close();
        await compactor.settled();
        expect(open).toBe(0);
        expect(held.latest).toEqual({ memoryBytes: 0, temporaryBytes: 0, tagBytes: {} });
      }
      // Nine runs, one instance each (never two at once), and the merge of the day's small files.
      expect(opened.length).toBeGreaterThanOrEqual(10);
      expect(Math.max(...opened)).toBe(1);
      expect(compactor.counters.mergedFiles).toBeGreaterThan(0);
    } finally {
      await compactor.stop();
      tmp.cleanup();
    }
  });

  it('shows the compaction instance beside the queries one with managed storage, zero with no run going on', async () => {
    const tmp = tempDir('le-compaction-metrics-');
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('data'), maxSegmentAgeMs: HANG_MS, segmentQuietMs: HANG_MS }, cache: false });
    try {
      const compaction = ep.stats().memory.duckdb.find((d) => d.instance === 'compaction');
      expect(compaction).toEqual({ instance: 'compaction', memoryBytes: 0, temporaryBytes: 0, tagBytes: {} });
      const text = metricsText(ep.stats());
      expect(text).toMatch(/^log_endpoints_duckdb_memory_bytes\{instance="compaction"\} 0$/m);
      expect(text).toMatch(/^log_endpoints_duckdb_temporary_bytes\{instance="compaction"\} 0$/m);
    } finally {
      await ep.close();
      tmp.cleanup();
    }
  });
});
