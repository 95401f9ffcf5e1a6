import { DuckDBInstance } from '@duckdb/node-api';
import { gzipSync } from 'node:zlib';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoints, SourceGlobs } from '../src/index';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

const EDGE = [
  edgeEvent({ project: 'abc', id: 'e1', timestamp: '2026-11-21T10:15:02.123456Z', path: '/rest/v1/a' }),
  edgeEvent({ project: 'abc', id: 'e2', timestamp: 1795256102123457, path: '/storage/v1/b' }),
  edgeEvent({ project: 'abc', id: 'e3', timestamp: '2026-11-21T13:15:02.5+03:00', path: '/auth/v1/c' }),
  edgeEvent({ project: 'xyz', id: 'e4', timestamp: '2026-11-21T11:00:00Z', path: '/realtime/v1/d' }),
];
const FUNCTIONS = [
  functionEvent({ project: 'abc', id: 'f1', timestamp: '2026-11-21T10:15:02.123456Z', ms: 12 }),
  functionEvent({ project: 'abc', id: 'f2', timestamp: 1795256102123457, ms: 40, status: 503 }),
  functionEvent({ project: 'abc', id: 'f3', timestamp: '2026-11-21T10:16:00Z', ms: null }),
];

async function answers(ep: Endpoints) {
  return {
    stats: await ep.functionsInvocationStats({ project: 'abc', interval: '1day' }),
    logs: await ep.logsAll({ project: 'abc', project_tier: 'FREE' }),
    usage: await ep.usageApiCounts({ project: 'abc', interval: 'daily' }),
  };
}

async function withEndpoints<T>(sources: SourceGlobs, work: (ep: Endpoints) => Promise<T>): Promise<T> {
  const { ep } = await endpointsAt(sources, NOW);
  try {
    return await work(ep);
  } finally {
    await ep.close();
  }
}

describe('log sources', () => {
  const tmp = tempDir();
  let duck: Awaited<ReturnType<typeof DuckDBInstance.create>>;
  let baseline: Awaited<ReturnType<typeof answers>>;
  const sql = async (text: string) => {
    const c = await duck.connect();
    try {
      await c.run("SET TimeZone = 'UTC'");
      await c.run(text);
    } finally {
      c.closeSync();
    }
  };

  beforeAll(async () => {
    duck = await DuckDBInstance.create(':memory:');
    writeLines(tmp.path('base', 'edge.ndjson'), EDGE);
    writeLines(tmp.path('base', 'fn.ndjson'), FUNCTIONS);
    baseline = await withEndpoints({ edgeLogs: tmp.path('base', 'edge.ndjson'), functionEdgeLogs: tmp.path('base', 'fn.ndjson') }, answers);
  });
  afterAll(() => {
    duck.closeSync();
    tmp.cleanup();
  });

  it('the baseline sees every event in both timestamp forms', () => {
    expect(baseline.stats).toEqual([expect.objectContaining({ timestamp: '2026-11-21T10:00:00.000000Z', count: 3, error_count: 1 })]);
    expect(baseline.logs.map((r) => [r.id, r.timestamp])).toEqual([
      ['e3', '2026-11-21T10:15:02.500000Z'],
      ['e2', '2026-11-21T10:15:02.123457Z'],
      ['e1', '2026-11-21T10:15:02.123456Z'],
    ]);
    expect(baseline.usage).toEqual([{ timestamp: '2026-11-21T00:00:00.000000Z', total_rest_requests: 1, total_storage_requests: 1, total_auth_requests: 1, total_realtime_requests: 0 }]);
  });

  it('a broken line in the middle of a file loses nothing around it, and is counted', async () => {
    const [a, b, c, d] = EDGE;
    writeLines(tmp.path('broken', 'edge.ndjson'), [a!, b!, '{"id": "half", "timestamp": "2026-11-21T10:', '', 'not json at all', c!, d!]);
    writeLines(tmp.path('broken', 'fn.ndjson'), [FUNCTIONS[0]!, '[1, 2, 3]', FUNCTIONS[1]!, '42', FUNCTIONS[2]!]);
    await withEndpoints({ edgeLogs: tmp.path('broken', 'edge.ndjson'), functionEdgeLogs: tmp.path('broken', 'fn.ndjson') }, async (ep) => {
      expect(await answers(ep)).toEqual(baseline);
      const inspection = await ep.inspectSources();
      expect(inspection).toEqual([
        {
          source: 'edgeLogs',
          files: 1,
          lines: 6,
          skippedLines: 2,
          parquetRows: 0,
          globs: [{ glob: tmp.path('broken', 'edge.ndjson'), files: 1 }],
          emptyGlobs: [],
          skippedFiles: [],
          coveredFiles: 0,
        },
        {
          source: 'functionEdgeLogs',
          files: 1,
          lines: 5,
          skippedLines: 2,
          parquetRows: 0,
          globs: [{ glob: tmp.path('broken', 'fn.ndjson'), files: 1 }],
          emptyGlobs: [],
          skippedFiles: [],
          coveredFiles: 0,
        },
      ]);
    });
  });

  it('reads .jsonl, .json, gzip and zstd newline-delimited JSON', async () => {
    writeLines(tmp.path('ext', 'edge-1.jsonl'), EDGE.slice(0, 1));
    writeLines(tmp.path('ext', 'edge-2.json'), EDGE.slice(1, 2));
    writeFileSync(
      tmp.path('ext', 'edge-3.ndjson.gz'),
      gzipSync(
        EDGE.slice(2)
          .map((e) => JSON.stringify(e))
          .join('\n') + '\n',
      ),
    );
    writeLines(tmp.path('ext', 'plain-fn.ndjson'), FUNCTIONS);
    await sql(`COPY (SELECT * FROM read_json('${tmp.path('ext', 'plain-fn.ndjson')}')) TO '${tmp.path('ext', 'fn.ndjson.zst')}' (FORMAT json, COMPRESSION zstd)`);
    await withEndpoints({ edgeLogs: tmp.path('ext', 'edge-*'), functionEdgeLogs: tmp.path('ext', '*.zst') }, async (ep) => {
      expect(await answers(ep)).toEqual(baseline);
    });
  });

  it('a glob or list of globs; overlapping globs read a file once; other extensions are ignored', async () => {
    writeLines(tmp.path('list', 'a', 'edge.ndjson'), EDGE.slice(0, 2));
    writeLines(tmp.path('list', 'b', 'edge.ndjson'), EDGE.slice(2));
    writeFileSync(tmp.path('list', 'b', 'notes.txt'), 'not a log\n');
    await withEndpoints(
      {
        edgeLogs: [tmp.path('list', 'a', '*.ndjson'), tmp.path('list', '*', '*'), tmp.path('list', 'b', 'edge.ndjson')],
        functionEdgeLogs: [tmp.path('base', 'fn.ndjson')],
      },
      async (ep) => expect(await answers(ep)).toEqual(baseline),
    );
  });

  it('relative globs resolve against the working directory', async () => {
    const rel = relative(process.cwd(), tmp.path('base'));
    await withEndpoints({ edgeLogs: `${rel}/edge.ndjson`, functionEdgeLogs: `${rel}/fn.*` }, async (ep) => {
      expect(await answers(ep)).toEqual(baseline);
    });
  });

  it('a glob that matches nothing is an empty source, not an error', async () => {
    await withEndpoints({ edgeLogs: tmp.path('nothing', '*.ndjson'), functionEdgeLogs: [] }, async (ep) => {
      expect(await answers(ep)).toEqual({ stats: [], logs: [], usage: [] });
    });
    await withEndpoints({}, async (ep) => expect(await answers(ep)).toEqual({ stats: [], logs: [], usage: [] }));
  });

  it('files are re-listed on every query: a new file is read by the next query', async () => {
    writeLines(tmp.path('grow', 'edge-1.ndjson'), EDGE.slice(0, 1));
    await withEndpoints({ edgeLogs: tmp.path('grow', '*.ndjson') }, async (ep) => {
      expect(await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).toHaveLength(1);
      writeLines(tmp.path('grow', 'edge-2.ndjson'), EDGE.slice(1));
      expect(await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).toHaveLength(3);
    });
  });

  it('a file rewritten under the same name is read anew (kept prepared statements never hold old data)', async () => {
    const ndjsonFile = tmp.path('same', 'edge.ndjson');
    const parquetFile = tmp.path('same', 'edge.parquet');
    const toParquet = () => sql(`COPY (SELECT * FROM read_json('${ndjsonFile}', columns = {id: 'VARCHAR', timestamp: 'VARCHAR', project: 'VARCHAR'})) TO '${parquetFile}' (FORMAT parquet)`);
    writeLines(ndjsonFile, EDGE.slice(0, 1));
    await toParquet();
    await withEndpoints({ edgeLogs: tmp.path('same', 'edge.*') }, async (ep) => {
      const ids = async () => (await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).map((r) => r.id).sort();
      expect(await ids()).toEqual(['e1', 'e1']);
      writeLines(ndjsonFile, EDGE.slice(0, 3));
      await toParquet();
      expect(await ids()).toEqual(['e1', 'e1', 'e2', 'e2', 'e3', 'e3']);
    });
  });

  it('a path with a quote in it is escaped, not SQL', async () => {
    writeLines(tmp.path("it's", 'edge.ndjson'), EDGE);
    writeLines(tmp.path("it's", 'fn.ndjson'), FUNCTIONS);
    await withEndpoints({ edgeLogs: tmp.path("it's", 'edge.ndjson'), functionEdgeLogs: tmp.path("it's", 'fn.ndjson') }, async (ep) => {
      expect(await answers(ep)).toEqual(baseline);
    });
  });

  describe('Parquet gives the same answers as NDJSON', () => {
    const edgeJson = () => `read_json('${tmp.path('base', 'edge.ndjson')}', columns = {id: 'VARCHAR', timestamp: 'VARCHAR', event_message: 'VARCHAR', project: 'VARCHAR', metadata: 'JSON'})`;
    const fnJson = () => `read_json('${tmp.path('base', 'fn.ndjson')}', columns = {id: 'VARCHAR', timestamp: 'VARCHAR', event_message: 'VARCHAR', metadata: 'JSON'})`;
    // timestamp text -> TIMESTAMP the way a user's own pipeline would do it
    const ts = `COALESCE(make_timestamp(TRY_CAST(timestamp AS BIGINT)), CAST(CAST(timestamp AS TIMESTAMPTZ) AS TIMESTAMP))`;

    const layouts: Record<string, () => [string, string]> = {
      'TIMESTAMP column, metadata as JSON text': () => [
        `SELECT id, ${ts} AS timestamp, event_message, project, CAST(metadata AS VARCHAR) AS metadata FROM ${edgeJson()}`,
        `SELECT id, ${ts} AS timestamp, event_message, CAST(metadata AS VARCHAR) AS metadata FROM ${fnJson()}`,
      ],
      'INT64 microseconds, metadata as a STRUCT': () => [
        `SELECT id, epoch_us(${ts}) AS timestamp, event_message, project,
           {'request': {'method': metadata->>'$.request.method', 'path': metadata->>'$.request.path', 'url': metadata->>'$.request.url', 'host': metadata->>'$.request.host'},
            'response': {'status_code': CAST(metadata->>'$.response.status_code' AS INTEGER), 'origin_time': CAST(metadata->>'$.response.origin_time' AS INTEGER)}} AS metadata
         FROM ${edgeJson()}`,
        `SELECT id, epoch_us(${ts}) AS timestamp, event_message,
           {'project_ref': metadata->>'$.project_ref', 'function_id': metadata->>'$.function_id',
            'execution_time_ms': CAST(metadata->>'$.execution_time_ms' AS DOUBLE),
            'response': {'status_code': CAST(metadata->>'$.response.status_code' AS INTEGER)}} AS metadata
         FROM ${fnJson()}`,
      ],
      'TIMESTAMPTZ column': () => [
        `SELECT id, CAST(${ts} AS TIMESTAMPTZ) AS timestamp, event_message, project, metadata FROM ${edgeJson()}`,
        `SELECT id, CAST(${ts} AS TIMESTAMPTZ) AS timestamp, event_message, metadata FROM ${fnJson()}`,
      ],
    };

    for (const [name, layout] of Object.entries(layouts)) {
      it(name, async () => {
        const dir = name.replace(/\W+/g, '-');
        const [edge, fn] = layout();
        await sql(`COPY (${edge}) TO '${tmp.path(dir + '-edge.parquet')}' (FORMAT parquet)`);
        await sql(`COPY (${fn}) TO '${tmp.path(dir + '-fn.parquet')}' (FORMAT parquet)`);
        await withEndpoints({ edgeLogs: tmp.path(dir + '-edge.parquet'), functionEdgeLogs: tmp.path(dir + '-fn.parquet') }, async (ep) => {
          const got = await answers(ep);
          if (name.includes('STRUCT')) {
            // A STRUCT holds the declared fields only; compare the rest and the shape of metadata.
            expect(got.stats).toEqual(baseline.stats);
            expect(got.usage).toEqual(baseline.usage);
            expect(got.logs.map((r) => ({ ...r, metadata: null }))).toEqual(baseline.logs.map((r) => ({ ...r, metadata: null })));
            expect(got.logs[0]!.metadata).toMatchObject({ request: { path: '/auth/v1/c' }, response: { status_code: 200 } });
          } else {
            expect(got).toEqual(baseline);
          }
        });
      });
    }

    it('one source may mix NDJSON and Parquet files', async () => {
      writeLines(
        tmp.path('mixed', 'part.ndjson'),
        EDGE.filter((e) => e.id === 'e2' || e.id === 'e3'),
      );
      await sql(`COPY (SELECT id, ${ts} AS timestamp, event_message, project, metadata FROM ${edgeJson()} WHERE id IN ('e1', 'e4')) TO '${tmp.path('mixed', 'part.parquet')}' (FORMAT parquet)`);
      await withEndpoints({ edgeLogs: tmp.path('mixed', 'part.*'), functionEdgeLogs: tmp.path('base', 'fn.ndjson') }, async (ep) => {
        expect(await answers(ep)).toEqual(baseline);
      });
    });
  });
});

describe('what a glob lists', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it("skips names starting with '.' or '_' below the glob's fixed part (a running compact's staging, manifests), but not a file named outright", async () => {
    const event = edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z' });
    writeLines(tmp.path('out', 'date=2026-11-21', 'part.ndjson'), [event]);
    writeLines(tmp.path('out', '.compact-123.tmp', 'date=2026-11-21', 'part.ndjson'), [event]);
    writeLines(tmp.path('out', '_compact', 'x.ndjson'), [event]);
    writeLines(tmp.path('out', '.hidden.ndjson'), [event]);
    writeLines(tmp.path('.dot-parent', 'edge.ndjson'), [event]);
    await withEndpoints({ edgeLogs: tmp.path('out', '**', '*.ndjson') }, async (ep) => {
      expect(await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).toHaveLength(1);
    });
    await withEndpoints({ edgeLogs: [tmp.path('out', '.hidden.ndjson'), tmp.path('.dot-parent', '*.ndjson')] }, async (ep) => {
      expect(await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).toHaveLength(2);
    });
  });
});
