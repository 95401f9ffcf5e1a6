import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { defineSource, type Endpoints, type SourceConfig, type SourceDescriptor } from '../src/index';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { openDatabase } from '../src/duckdb/open-database';
import { DEFAULT_COMPACTION_DUCKDB } from '../src/duckdb/compaction-duckdb';
import { parquetLayoutOf } from '../src/duckdb/parquet-layout';
import { sqlString } from '../src/duckdb/sql-literal';
import { edgeLogs } from '../src/sources/edge-logs';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

// docs/ingest.md, "Layout, compaction and retention": a source's `parquet.compression` is the codec
// of its compacted data files (zstd unless it says `lz4`); its answers are the same either way.

const NOW = '2026-11-21T12:00:00Z';

/** Two sources alike but for their files' codec: the gateway's shape, typed status and path. */
function gatewayLike(name: string, relation: string, compression?: 'zstd' | 'lz4'): SourceDescriptor {
  const config: SourceConfig = {
    name,
    relation,
    logflare: { names: [`${relation}.test`] },
    projectColumn: 'project',
    columns: { project: 'text' },
    typedFields: ['request.path', 'response.status_code'],
    parquet: { rowGroupRows: 8192, ...(compression ? { compression } : {}) },
  };
  return defineSource(config);
}

/** The codec of every column chunk of a Parquet file (one entry per distinct codec). */
async function codecsOf(file: string): Promise<string[]> {
  const { connection, close } = await openDatabase({ threads: 1 });
  try {
    return (await connection.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata(${sqlString(file)}) ORDER BY 1`)).getRowObjects().map((r) => String(r.compression));
  } finally {
    await close();
  }
}

describe("a source's Parquet codec (parquet.compression)", () => {
  const tmp = tempDir('le-parquet-compression-');
  const zstd = gatewayLike('zstdLogs', 'zstd_logs');
  const lz4 = gatewayLike('lz4Logs', 'lz4_logs', 'lz4');
  const statuses = [200, 201, 204, 301, 404, 429, 500, 503];
  // 2026-11-21 and 2026-11-20: 12,000 events each, over hours, paths and statuses (two row groups a day).
  const events = ['2026-11-21T11:59:00Z', '2026-11-20T11:59:00Z'].flatMap((end) =>
    Array.from({ length: 12_000 }, (_, i) =>
      edgeEvent({
        id: `${end.slice(0, 10)}-${i}`,
        project: 'p',
        timestamp: new Date(Date.parse(end) - i * 3_000).toISOString(),
        path: `/rest/v1/t${i % 7}`,
        extra: { response: { status_code: statuses[i % statuses.length], origin_time: i % 50 } },
      }),
    ),
  );
  let ep: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('ndjson', 'all.ndjson'), events);
    for (const source of [zstd, lz4]) {
      await compactLogs({ source: source.name, sourceDefinitions: [source], inputs: tmp.path('ndjson', 'all.ndjson'), outDir: tmp.path(source.name) });
    }
    ({ ep } = await endpointsAt({ zstdLogs: tmp.path('zstdLogs'), lz4Logs: tmp.path('lz4Logs') }, NOW, {
      sourceDefinitions: [zstd, lz4],
      sandboxable: ['logs.all'],
      tierWindow: false,
      sqlDialect: 'bigquery',
    }));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  const filesOf = (root: string) => [...readDatasetStateStable(root).files.values()].map((f) => join(root, f.path));

  it('is zstd unless the descriptor says lz4, which a descriptor keeps only when it is not the default', () => {
    expect(parquetLayoutOf(zstd).compression).toBe('zstd');
    expect(parquetLayoutOf(lz4).compression).toBe('lz4');
    expect(parquetLayoutOf(edgeLogs).compression).toBe('zstd');
    expect(zstd.parquet).toEqual({ rowGroupRows: 8192 });
    expect(gatewayLike('explicit', 'explicit_logs', 'zstd').parquet).toEqual({ rowGroupRows: 8192 });
    expect(lz4.parquet).toEqual({ rowGroupRows: 8192, compression: 'lz4' });
  });

  it('refuses a codec it does not write', () => {
    const config = { name: 'odd', relation: 'odd_logs', logflare: { names: ['odd.logs'] }, projectColumn: 'project', columns: { project: 'text' as const } };
    expect(() => defineSource({ ...config, parquet: { compression: 'gzip' as 'lz4' } })).toThrow(/parquet\.compression must be one of zstd, lz4, not gzip/);
  });

  it("writes every column chunk of a compacted file in the source's codec", async () => {
    const [zstdFiles, lz4Files] = [filesOf(tmp.path('zstdLogs')), filesOf(tmp.path('lz4Logs'))];
    expect(zstdFiles).toHaveLength(2);
    expect(lz4Files).toHaveLength(2);
    for (const file of zstdFiles) expect(await codecsOf(file)).toEqual(['ZSTD']);
    for (const file of lz4Files) expect(await codecsOf(file)).toEqual(['LZ4_RAW']);
  });

  it("writes a day's merged file in the source's codec too", async () => {
    const root = tmp.path('merged');
    writeLines(tmp.path('merge', 'a.ndjson'), events.slice(0, 3_000));
    writeLines(tmp.path('merge', 'b.ndjson'), events.slice(3_000, 6_000));
    await compactLogs({ source: lz4.name, sourceDefinitions: [lz4], inputs: tmp.path('merge', 'a.ndjson'), outDir: root });
    await compactLogs({ source: lz4.name, sourceDefinitions: [lz4], inputs: tmp.path('merge', 'b.ndjson'), outDir: root });
    expect((await mergeSmallFiles(root, lz4, DEFAULT_COMPACTION_DUCKDB)).merged).toBe(2);
    const [merged] = filesOf(root);
    expect(await codecsOf(merged!)).toEqual(['LZ4_RAW']);
  });

  it('answers the same over both: a chart of counts per hour and status, a list, a count, a top of paths, a log by id', async () => {
    const queries = (relation: string) => [
      `select timestamp_trunc(t.timestamp, hour) as timestamp, count(case when response.status_code >= 500 then 1 end) as error_count, count(case when response.status_code >= 400 and response.status_code < 500 then 1 end) as warning_count, count(*) as n from ${relation} t cross join unnest(t.metadata) as metadata cross join unnest(metadata.response) as response where t.timestamp > '2026-11-20T00:00:00Z' group by timestamp order by timestamp asc`,
      `select id, timestamp, event_message, metadata from ${relation} order by timestamp desc limit 100`,
      `select count(*) as count from ${relation} cross join unnest(metadata) as m cross join unnest(m.response) as r where r.status_code between 500 and 599`,
      `select request.path as path, count(timestamp) as c from ${relation} cross join unnest(metadata) as m cross join unnest(m.request) as request group by path order by c desc, path limit 100`,
      `select id, timestamp, event_message, metadata from ${relation} where id = '2026-11-20-4321' limit 1`,
    ];
    const [zstdQueries, lz4Queries] = [queries('zstd_logs'), queries('lz4_logs')];
    for (let i = 0; i < zstdQueries.length; i++) {
      const [a, b] = await Promise.all([ep.query('logs.all', { project: 'p' }, { sql: zstdQueries[i]! }), ep.query('logs.all', { project: 'p' }, { sql: lz4Queries[i]! })]);
      expect((a.result as unknown[]).length).toBeGreaterThan(0);
      expect(b.result).toEqual(a.result);
    }
  });
});
