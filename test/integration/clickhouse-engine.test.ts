/**
 * The ClickHouse engine against a real 2-shard clickhouse-server 18.16 cluster: the server probe,
 * text values through external data (property test), the same errors and limits as the DuckDB
 * engine, and the loader's handling of unreadable files and of events handed over as objects.
 */
import { querySql } from '../../src/sql/query-files';
import { compileQuery } from '../../src/query/compile-query';
import { BUILT_IN_SOURCE_SET } from '../../src/sources/built-ins';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseEngine, clickhouseLoader } from '../../src/clickhouse';
import { probeServer, type ServerFeatures } from '../../src/engine/clickhouse/connection';
import { toEngineError } from '../../src/engine/clickhouse/classify-error';
import { runSql } from '../../src/engine/clickhouse/run-sql';
import { createEndpoints, defineEndpoint, defineSource, EngineError, InvalidParameterError, p, type Endpoints } from '../../src/index';
import { edgeEvent, functionEvent, tempDir, writeLines } from '../support/log-files';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';
import { freePort } from './support/servers';

const NOW = new Date('2026-11-21T12:00:00Z');

describe('ClickHouse engine on a 2-shard cluster', () => {
  const tmp = tempDir('le-ch-engine-');
  let cluster: ClickHouseCluster;
  let client: ClickHouseClient;
  let features: ServerFeatures;
  let ep: Endpoints;
  const target = () => ({ url: cluster.url, database: 'engine_test', cluster: cluster.name });

  beforeAll(async () => {
    cluster = await startClickHouseCluster();
    client = createClient({ url: cluster.url, log: { level: 127 as never } });
    features = await probeServer(client);
    for (const shard of cluster.shards) {
      const loader = clickhouseLoader({ ...target(), url: shard.url });
      await loader.init();
      await loader.close();
    }
    const loader = clickhouseLoader(target());
    await loader.insertEvents('edgeLogs', [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', id: 'e1' })]);
    await loader.insertEvents('functionEdgeLogs', [functionEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', ms: 12 })]);
    await loader.close();
    ep = await createEndpoints({ sources: {}, engine: clickhouseEngine(target()), now: () => NOW, cache: false });
  });

  afterAll(async () => {
    await ep?.close();
    await client?.close();
    await cluster?.stop();
    tmp.cleanup();
  });

  it('probes the server once: 18.16 has no query parameters, so text goes as external data', () => {
    expect(features).toEqual({ version: '18.16.1', queryParameters: false });
  });

  it('carries any text value to the server and back unchanged (external data)', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 300 });
    await fc.assert(
      fc.asyncProperty(text, fc.option(text, { nil: null }), async (s, n) => {
        const result = await runSql(client, features, { sql: 'SELECT {s:String} AS s, {n:Nullable(String)} AS n, length({s:String}) AS bytes', params: { s, n } });
        expect(result.data[0]).toEqual({ s: toUtf8String(s), n: n === null ? null : toUtf8String(n), bytes: String(Buffer.byteLength(s)) });
      }),
      { numRuns: 300 },
    );
  });

  it('answers the endpoints through the Distributed tables', async () => {
    expect(await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).toMatchObject([{ id: 'e1', timestamp: '2026-11-21T11:00:00.000000Z' }]);
    expect(await ep.functionsInvocationStats({ project: 'abc', interval: '1day' })).toEqual([
      {
        timestamp: '2026-11-21T11:00:00.000000Z',
        min_execution_time: 12,
        max_execution_time: 12,
        avg_execution_time: 12,
        p95_execution_time: 12,
        p99_execution_time: 12,
        count: 1,
        error_count: 0,
      },
    ]);
    await expect(ep.ping()).resolves.toBeUndefined();
  });

  it("serves a source of the user's: its tables made by init, loaded, and read by an endpoint of its own", async () => {
    const authLogs = defineSource({
      name: 'authLogs',
      relation: 'auth_logs',
      logflare: { names: ['gotrue.logs.prod'] },
      columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
      projectColumn: 'project',
    });
    const statuses = defineEndpoint({
      name: 'auth.statuses',
      params: { project: p.text() },
      sql: {
        duckdb: 'SELECT status, count(*) AS n FROM auth_logs WHERE project = $project GROUP BY 1 ORDER BY 1',
        clickhouse: 'SELECT status, count() AS n FROM auth_logs WHERE project = {project:String} GROUP BY status ORDER BY status',
      },
      columns: { status: { type: 'integer', nullable: true }, n: 'integer' },
    });
    const mine = { url: cluster.url, database: 'user_sources', cluster: cluster.name, sourceDefinitions: [authLogs] };
    for (const shard of cluster.shards) {
      const loader = clickhouseLoader({ ...mine, url: shard.url });
      await loader.init();
      await loader.close();
    }
    const loader = clickhouseLoader(mine);
    await loader.insertEvents(
      'authLogs',
      [401, 401, 200].map((status, i) => ({ id: `a${i}`, timestamp: '2026-11-21T11:00:00Z', project: 'abc', metadata: { status } })),
    );
    await loader.close();
    // The instance and its engine know the same sources; an engine made without them is refused.
    await expect(createEndpoints({ engine: clickhouseEngine({ ...mine, sourceDefinitions: [] }), sourceDefinitions: [authLogs], endpoints: [statuses] })).rejects.toThrow(
      /does not know the source authLogs/,
    );
    const users = await createEndpoints({ engine: clickhouseEngine(mine), sourceDefinitions: [authLogs], endpoints: [statuses], now: () => NOW, cache: false });
    try {
      expect(await users.authStatuses({ project: 'abc' })).toEqual([
        { status: 200, n: 1 },
        { status: 401, n: 2 },
      ]);
      expect(await users.logsAll({ project: 'abc', project_tier: 'FREE' })).toEqual([]);
    } finally {
      await users.close();
    }
  });

  it('refuses a pattern ClickHouse will not compile as invalid_parameter, in RE2 words', async () => {
    for (const pattern of ['(', 'a)|(b', '[z-a]', 'a{2,1}']) {
      const error = await ep.usageApiCounts({ project: pattern, interval: 'daily' }).catch((e: unknown) => e);
      expect(error, pattern).toBeInstanceOf(InvalidParameterError);
      expect(error).toMatchObject({ code: 'invalid_parameter', status: 400, param: 'project' });
      expect((error as Error).message).not.toContain('(?-s)');
      expect((error as Error).message).not.toMatch(/SELECT|Code:/);
    }
  });

  it('refuses (?<n>x) in the very words of the DuckDB engine: one RE2 judges patterns for every engine', async () => {
    const duck = await createEndpoints({ sources: {}, now: () => NOW, cache: false });
    try {
      for (const pattern of ['(?<n>x)', '(', 'a)|(b']) {
        const byClickHouse = await ep.usageApiCounts({ project: pattern, interval: 'daily' }).catch((e: unknown) => e);
        const byDuckDB = await duck.usageApiCounts({ project: pattern, interval: 'daily' }).catch((e: unknown) => e);
        expect(byClickHouse, pattern).toBeInstanceOf(InvalidParameterError);
        expect((byClickHouse as Error).message).toBe((byDuckDB as Error).message);
      }
    } finally {
      await duck.close();
    }
  });

  it('reads timestamps past 2^53 microseconds exactly from a server that writes 64-bit integers as bare JSON numbers (25.8+)', async () => {
    // 2^53 + 1 microseconds: a double cannot hold it (it becomes ...740992).
    const micros = 2n ** 53n + 1n;
    const iso = '2255-06-05T23:47:34.740993Z';
    const bare = { ...target(), username: 'bare_int64' };
    // The fault is real: this user's answers carry bare numbers unless a query asks otherwise.
    const raw = createClient({ url: cluster.url, username: 'bare_int64', log: { level: 127 as never } });
    try {
      const text = await (await raw.query({ query: `SELECT toInt64('${micros}') AS t`, format: 'JSON' })).text();
      expect(text).toMatch(new RegExp(`"t": ${micros}\\b`));
    } finally {
      await raw.close();
    }
    const loader = clickhouseLoader(bare);
    try {
      expect(await loader.insertEvents('edgeLogs', [edgeEvent({ project: 'far', id: 'f1', timestamp: iso })])).toEqual({ rows: 1, skipped: 0 });
    } finally {
      await loader.close();
    }
    const far = await createEndpoints({ sources: {}, engine: clickhouseEngine(bare), now: () => new Date('2255-06-06T00:00:00Z'), cache: false });
    try {
      expect((await far.logsAll({ project: 'far', project_tier: 'FREE' })).map((r) => [r.id, r.timestamp])).toEqual([['f1', '2255-06-05T23:47:34.740993Z']]);
    } finally {
      await far.close();
    }
  });

  it('reads an older logs.all page in two phases: the wide rows near the page only, not every row of the project', async () => {
    // 200,000 rows of one project over 10 hours, ~600 bytes each (~120 MB in all). One phase
    // decodes the metadata of every row after the page's lower bound; two phases read the
    // timestamps, then the few granules (8,192 rows) that hold the page: ~25 MB on both shards.
    const loader = clickhouseLoader(target());
    const start = Date.parse('2026-11-21T01:00:00Z');
    const events = Array.from({ length: 200_000 }, (_, i) =>
      edgeEvent({
        project: 'wide',
        id: `w${i}`,
        timestamp: new Date(start + i * 180).toISOString(),
        extra: { padding: 'x'.repeat(400 + (i % 100)) },
      }),
    );
    await loader.insertEvents('edgeLogs', events);
    await loader.close();
    const bounded = await createEndpoints({ sources: {}, engine: clickhouseEngine({ ...target(), settings: { max_bytes_to_read: 50_000_000 } }), now: () => NOW, cache: false });
    try {
      const first = await bounded.logsAll({ project: 'wide', project_tier: 'PRO' });
      expect(first.map((r) => r.id)).toEqual(Array.from({ length: 100 }, (_, k) => `w${199_999 - k}`));
      const older = await bounded.logsAll({ project: 'wide', project_tier: 'PRO', iso_timestamp_end: '2026-11-21T05:00:00.000Z' });
      expect(older[0]).toMatchObject({ id: 'w80000', timestamp: '2026-11-21T05:00:00.000000Z' });
      expect(older).toHaveLength(100);
      // The same page from one statement over every row goes past the limit: the bound is not loose.
      const oneStatement = querySql('clickhouse', 'logs.all').replace(/AND timestamp >= \(\s*SELECT min[\s\S]*?\n  \)\n/, '');
      expect(oneStatement).not.toContain('min(timestamp)');
      const tooMuch = await client
        .query({
          query: oneStatement
            .replace(/FROM edge_logs/g, 'FROM engine_test.edge_logs')
            .replace('{project:String}', "'wide'")
            .replace('{after:Nullable(Int64)}', '0')
            .replace('{until:Nullable(Int64)}', 'NULL')
            .replace('{limit:UInt32}', '100'),
          format: 'JSONEachRow',
          clickhouse_settings: { max_bytes_to_read: '50000000' },
        })
        .then(
          () => 'answered',
          (error: unknown) => String(error),
        );
      expect(tooMuch).toMatch(/Limit for \(uncompressed\) bytes to read exceeded|TOO_MANY_BYTES/i);
    } finally {
      await bounded.close();
    }
  });

  it('answers query_failed with no SQL in the message when the tables are missing', async () => {
    const other = await createEndpoints({ sources: {}, engine: clickhouseEngine({ ...target(), database: 'no_such_db' }), now: () => NOW, cache: false });
    try {
      const error = await other.logsAll({ project: 'abc', project_tier: 'FREE' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'query_failed', status: 500, message: 'The query failed in the engine.' });
      expect(String((error as Error).cause)).toMatch(/no_such_db/);
    } finally {
      await other.close();
    }
  });

  it('answers overloaded (503, Retry-After) when the server is out of memory for the query', async () => {
    const tight = await createEndpoints({ sources: {}, engine: clickhouseEngine({ ...target(), settings: { max_memory_usage: 1 } }), now: () => NOW, cache: false });
    try {
      const error = await tight.logsAll({ project: 'abc', project_tier: 'FREE' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'overloaded', status: 503, retryAfterSeconds: 1 });
      expect(String((error as Error).cause)).toMatch(/Code: 241/);
    } finally {
      await tight.close();
    }
  });

  it("reads the server's own time limit error as timeout", async () => {
    const error = await runSql(client, features, { sql: 'SELECT count() AS n FROM system.numbers', params: {}, settings: { max_execution_time: 1 } }).catch((e: unknown) => e);
    expect(toEngineError(error, { timedOut: false, closed: false, timeoutMs: 1000 })).toMatchObject({ code: 'timeout', status: 504 });
  });

  it('fails ping with overloaded (503, Retry-After) when nothing listens: the server may be back soon', async () => {
    const down = await freePort();
    const engine = clickhouseEngine({ url: `http://127.0.0.1:${down}`, database: 'x' });
    await expect(engine.ping()).rejects.toMatchObject({ code: 'overloaded', status: 503, retryAfterSeconds: 5 });
    await engine.close();
  });

  describe('against a server that never answers', () => {
    let stalled: Server;
    let port: number;
    const sockets = new Set<Socket>();
    const arrivals: Array<() => void> = [];
    beforeAll(async () => {
      stalled = createServer((socket) => {
        sockets.add(socket);
        socket.resume();
        arrivals.splice(0).forEach((resolve) => resolve());
      });
      stalled.listen(0, '127.0.0.1');
      await once(stalled, 'listening');
      port = (stalled.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      stalled.close();
    });
    const arrived = () => new Promise<void>((resolve) => arrivals.push(resolve));

    it('abandons a query past its time limit with timeout (504) and stays usable', async () => {
      const engine = clickhouseEngine({ url: `http://127.0.0.1:${port}`, database: 'x', queryTimeoutMs: 50 });
      for (let i = 0; i < 3; i++) {
        await expect(engine.ping()).rejects.toMatchObject({ code: 'timeout', status: 504 });
      }
      await engine.close();
    });

    it('refuses a query past the wait queue with overloaded, and close ends the one in flight with closed', async () => {
      const engine = clickhouseEngine({ url: `http://127.0.0.1:${port}`, database: 'x', maxConcurrentQueries: 1, maxQueuedQueries: 0, queryTimeoutMs: 600_000 });
      const plan = { statement: { name: 'catalog.projects', sql: { clickhouse: querySql('clickhouse', 'catalog.projects') } }, params: { after: { timestamp: 0n }, max_rows: 10 }, maxRows: 10 };
      const request = compileQuery(plan, engine.target, BUILT_IN_SOURCE_SET);
      const seen = arrived();
      const first = engine.run(request).catch((e: unknown) => e);
      await seen;
      await expect(engine.run(request)).rejects.toMatchObject({ code: 'overloaded', status: 503, retryAfterSeconds: 1 });
      await engine.close();
      expect(await first).toMatchObject({ code: 'closed' });
      await expect(engine.run(request)).rejects.toMatchObject({ code: 'closed' });
    });
  });

  describe('the loader', () => {
    it('loads the readable files of a glob and reports the unreadable one', async () => {
      writeLines(tmp.path('mixed', 'a.ndjson'), [edgeEvent({ project: 'mix', timestamp: '2026-11-21T11:00:00Z' }), '{broken', edgeEvent({ project: 'mix', timestamp: 'never' })]);
      writeFileSync(tmp.path('mixed', 'b.parquet'), 'PAR1 this is not parquet');
      const loader = clickhouseLoader({ ...target(), tables: { edgeLogs: 'edge_logs', functionEdgeLogs: 'function_edge_logs' } });
      try {
        const result = await loader.load('edgeLogs', tmp.path('mixed', '*'));
        expect(result).toMatchObject({ rows: 1, skipped: 2, failed: 1 });
        expect(result.files.find((f) => f.file.endsWith('b.parquet'))?.error).toBeTruthy();
      } finally {
        await loader.close();
      }
      expect(await ep.logsAll({ project: 'mix', project_tier: 'FREE' })).toHaveLength(1);
    });

    it('inserts events handed over as objects, reading timestamps the way the DuckDB engine does', async () => {
      const loader = clickhouseLoader(target());
      try {
        const result = await loader.insertEvents('edgeLogs', [
          edgeEvent({ project: 'objs', id: 'o1', timestamp: '2026-11-21T16:30:00.000001+05:00' }),
          edgeEvent({ project: 'objs', id: 'o2', timestamp: 1795262399999999 }),
          edgeEvent({ project: 'objs', id: 'o3', timestamp: 'garbage' }),
        ]);
        expect(result).toEqual({ rows: 2, skipped: 1 });
        expect(await loader.insertEvents('edgeLogs', [])).toEqual({ rows: 0, skipped: 0 });
      } finally {
        await loader.close();
      }
      expect((await ep.logsAll({ project: 'objs', project_tier: 'FREE' })).map((r) => [r.id, r.timestamp])).toEqual([
        ['o2', '2026-11-21T11:59:59.999999Z'],
        ['o1', '2026-11-21T11:30:00.000001Z'],
      ]);
    });
  });
});

/** What a JS string becomes as UTF-8 and back (lone surrogates turn into U+FFFD). */
function toUtf8String(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
