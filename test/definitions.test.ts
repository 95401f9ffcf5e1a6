import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, defineEndpoint, defineSource, InvalidOptionError, p, type Endpoints, type Engine } from '../src/index';
import { uuidFromName } from '../src/definitions/define-endpoint';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { generateLogs } from '../src/fixtures/generate-logs';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { createHandler } from '../src/http/create-handler';
import { openApiDocument } from '../src/http/openapi';
import { manualTime } from './support/cache-harness';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { waitUntil } from './support/hang-guard';

const NOW = new Date('2026-11-21T12:00:00Z');

// The example of docs/definitions.md, as written there.
const errorsByPath = defineEndpoint({
  name: 'errors.by-path',
  description: 'Gateway requests answered 400 or more, per path.',
  params: {
    project: p.text(), // required
    since: p.isoTimestamp().optional(),
    min_status: p.integer().default(400),
  },
  sql: {
    duckdb: `SELECT request_path AS path, count(*) AS errors
             FROM edge_logs
             WHERE project = $project AND status_code >= $min_status
               AND ($since IS NULL OR timestamp > $since)
             GROUP BY 1 ORDER BY errors DESC, path LIMIT 20`,
  },
  cache: { ttlSeconds: 60, warmingSeconds: 20 },
  columns: { path: 'text', errors: 'integer' },
});

/** The same answer computed in plain TypeScript over the generated NDJSON. */
function expectedErrors(file: string, project: string, minStatus: number, since: number | null) {
  const counts = new Map<string | null, number>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line);
    if (e.project !== project || (e.metadata?.response?.status_code ?? -1) < minStatus) continue;
    // Generated timestamps come in every form the docs allow: read by the library's own rule.
    if (since !== null && (eventTimestampMicros(e.timestamp) ?? 0n) <= BigInt(since) * 1000n) continue;
    const path: string | null = e.metadata?.request?.path ?? null;
    counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  // DuckDB's order: errors descending, then path ascending with NULL last.
  const byPath = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);
  return [...counts]
    .map(([path, errors]) => ({ path, errors }))
    .sort((a, b) => b.errors - a.errors || byPath(a.path, b.path))
    .slice(0, 20);
}

describe('a user endpoint (defineEndpoint) on every surface', () => {
  const tmp = tempDir();
  const time = manualTime('2026-11-21T12:00:00Z');
  let ep: Endpoints<typeof errorsByPath>;
  let project: string;
  let edgeFile: string;

  beforeAll(async () => {
    const generated = await generateLogs({ outDir: tmp.dir, now: NOW, days: 2, projects: 3, edgeEvents: 3000, functionEvents: 10 });
    edgeFile = generated.edgeLogs[0]!;
    project = generated.projects[0]!;
    ep = await createEndpoints({
      sources: { edgeLogs: join(tmp.dir, 'edge', '*.ndjson') },
      endpoints: [errorsByPath],
      now: () => NOW,
      cacheClock: time.clock,
      scheduler: time.scheduler,
    });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('answers like the same computation over the events, with the default and given parameters', async () => {
    const rows = await ep.query('errors.by-path', { project });
    expect(rows.result.length).toBeGreaterThan(0);
    expect(rows.result).toEqual(expectedErrors(edgeFile, project, 400, null));
    const since = '2026-11-21T00:00:00Z';
    const later = await ep.query('errors.by-path', { project, since, min_status: 500 });
    expect(later.result).toEqual(expectedErrors(edgeFile, project, 500, Date.parse(since)));
    // Integers may come as text (a query string) or as numbers: one cache entry for both.
    expect((await ep.query('errors.by-path', { project, since, min_status: '500' })).cache).toBe('hit');
  });

  it('is a method of its own, named after it (ep.errorsByPath): the rows of query', async () => {
    const made = await createEndpoints({ sources: { edgeLogs: join(tmp.dir, 'edge', '*.ndjson') }, endpoints: [errorsByPath], now: () => NOW, cache: false });
    try {
      expect(await made.errorsByPath({ project, min_status: 500 })).toEqual(expectedErrors(edgeFile, project, 500, null));
      // The built-ins' methods are made the same way, from their definitions.
      expect(await made.usageApiCounts({ project, interval: 'daily' })).toEqual((await made.query('usage.api-counts', { project, interval: 'daily' })).result);
      await expect(made.errorsByPath({ project, min_status: 'lots' } as never)).rejects.toMatchObject({ code: 'invalid_parameter', param: 'min_status' });
      // Not enumerable: the instance's own keys stay what they were.
      expect(Object.keys(made)).not.toContain('errorsByPath');
    } finally {
      await made.close();
    }
    // A name that would shadow a member keeps the member (call it with query).
    const shadow = defineEndpoint({ name: 'close', params: { project: p.text() }, sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE project = $project' }, columns: { n: 'integer' } });
    const closing = await createEndpoints({ sources: {}, endpoints: [shadow], cache: false });
    expect((await closing.query('close', { project })).result).toEqual([{ n: 0 }]);
    await closing.close();
    await expect(closing.ping()).rejects.toMatchObject({ code: 'closed' });
  });

  it('is cached by its policy and warmed while read; by UUID it shares the entry', async () => {
    const params = { project, min_status: 404 };
    expect((await ep.query('errors.by-path', params)).cache).toBe('miss');
    const byId = await ep.query(errorsByPath.id, { project, min_status: '404' });
    expect(byId.cache).toBe('hit');
    expect(byId.endpoint).toEqual({ name: 'errors.by-path', id: errorsByPath.id });
    expect(byId.ttlRemainingSeconds).toBe(60);
    const refreshes = ep.stats().warmingRefreshes;
    await time.advance(20_000);
    // Every key read in the last lifetime is refreshed, this one among them.
    expect(ep.stats().warmingRefreshes).toBeGreaterThan(refreshes);
    expect((await ep.query('errors.by-path', params)).ageSeconds).toBe(0);
  });

  it('refuses bad parameters with invalid_parameter before the engine, like the built-ins', async () => {
    const before = ep.stats().engineQueries;
    for (const [params, param] of [
      [{}, 'project'],
      [{ project, min_status: 'abc' }, 'min_status'],
      [{ project, min_status: '1.5' }, 'min_status'],
      [{ project, since: 'yesterday' }, 'since'],
      [{ project: 'x'.repeat(1025) }, 'project'],
    ] as const) {
      await expect(ep.query('errors.by-path' as string, params)).rejects.toMatchObject({ code: 'invalid_parameter', status: 400, param });
    }
    expect(ep.stats().engineQueries).toBe(before);
  });

  it('is listed beside the built-ins, with its policy, defaults and a UUID derived from its name', () => {
    const listed = ep.definitions.find((d) => d.name === 'errors.by-path')!;
    expect(listed).toMatchObject({ id: uuidFromName('errors.by-path'), builtIn: false, sandboxed: false, maxRows: 1000, cache: { ttlSeconds: 60, warmingSeconds: 20 } });
    expect(listed.params.map((s) => [s.name, s.format, s.required, s.default])).toEqual([
      ['project', 'text', true, undefined],
      ['since', 'iso-timestamp', false, undefined],
      ['min_status', 'integer', false, '400'],
    ]);
    expect(listed.columns.map((c) => [c.name, c.type])).toEqual([
      ['path', 'text'],
      ['errors', 'integer'],
    ]);
    expect(ep.definitions.filter((d) => d.builtIn).map((d) => d.name)).toEqual(['functions.invocation-stats', 'logs.all', 'usage.api-counts']);
  });

  it('is served over HTTP by name and by UUID, 400 for a bad parameter, and described in OpenAPI', async () => {
    const handler = createHandler(ep, { auth: false });
    const get = (path: string) => handler(new Request(`http://localhost${path}`));
    const byName = await get(`/api/endpoints/errors.by-path?project=${project}&min_status=500`);
    expect(byName.status).toBe(200);
    const body = (await byName.json()) as { result: unknown[] };
    expect(body.result).toEqual(expectedErrors(edgeFile, project, 500, null));
    const byId = await get(`/api/endpoints/query/${errorsByPath.id}?project=${project}&min_status=500`);
    expect(await byId.json()).toEqual(body);
    const bad = await get(`/api/endpoints/errors.by-path?project=${project}&min_status=lots`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: unknown }).error).toMatchObject({ code: 'invalid_parameter', param: 'min_status' });
    const openapi = openApiDocument(ep.definitions, { basePath: '', auth: false }) as { paths: Record<string, { get: { parameters: Array<{ name: string }> } }> };
    expect(openapi.paths['/api/endpoints/errors.by-path']!.get.parameters.map((x) => x.name)).toEqual(['project', 'since', 'min_status']);
    expect(openapi.paths[`/api/endpoints/query/${errorsByPath.id}`]).toBeDefined();
  });
});

describe('definitions that cannot work are refused, naming the endpoint and the problem', () => {
  const base = {
    name: 'bad.one',
    params: { project: p.text() },
    sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE project = $project' },
    columns: { n: 'integer' },
  } as const;

  it('at definition: undeclared and unused parameters, the wall clock, bad names and columns', () => {
    const refused = (config: object, message: RegExp) => {
      expect(() => defineEndpoint({ ...base, ...config } as never)).toThrow(InvalidOptionError);
      expect(() => defineEndpoint({ ...base, ...config } as never)).toThrow(message);
    };
    refused({ sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE project = $project AND id = $idd' } }, /"bad\.one".*uses \$idd, which is not declared/);
    refused({ params: { project: p.text(), limit_to: p.integer() } }, /"bad\.one".*limit_to is declared but its duckdb SQL never uses it/);
    refused({ sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE project = $project AND timestamp > now() - INTERVAL 1 DAY' } }, /calls now\(\): use \$now/);
    refused({ sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE project = $project AND timestamp > current_timestamp' } }, /calls current_timestamp/);
    refused({ params: { project: p.text(), now: p.text() } }, /\$now is bound by the library/);
    refused({ columns: { n: 'number' } }, /column "n" has no type/);
    refused({ columns: {} }, /declares no columns/);
    refused({ id: 'not-a-uuid' }, /id must be a UUID/);
    refused({ cache: { ttlSeconds: 0, warmingSeconds: 0 } }, /cache must be/);
    expect(() => defineEndpoint({ ...base, name: 'has space' })).toThrow(/letters, digits/);
    // A `$` inside a string literal or a comment is not a parameter; `$now` is always bound.
    expect(() => defineEndpoint({ ...base, sql: { duckdb: "SELECT count(*) AS n FROM edge_logs -- $x\nWHERE project = $project AND event_message <> '$y' AND timestamp <= $now" } })).not.toThrow();
  });

  it('at start: SQL that does not prepare, a name or UUID another endpoint has, no SQL for the engine', async () => {
    const start = (endpoints: unknown[], extra: object = {}) => createEndpoints({ sources: {}, endpoints: endpoints as never, ...extra });
    await expect(start([defineEndpoint({ ...base, sql: { duckdb: 'SELECT count(*) AS n FROM edge_logs WHERE projekt = $project' } })])).rejects.toThrow(
      /Endpoint "bad\.one" cannot work: its duckdb SQL does not prepare: .*projekt/,
    );
    await expect(start([defineEndpoint({ ...base, name: 'logs.all' })])).rejects.toThrow(/has the name "logs\.all" of endpoint "logs\.all"/);
    await expect(start([defineEndpoint(base), defineEndpoint({ ...base, name: 'other', id: uuidFromName('bad.one') })])).rejects.toThrow(/has the UUID .* of endpoint "bad\.one"/);
    await expect(start([{ name: 'x' }])).rejects.toThrow(/endpoints\[0\] is not a definition/);
    await expect(start([defineEndpoint({ ...base, name: 'errors.by-path' }), defineEndpoint({ ...base, name: 'errors-by_path' })])).rejects.toThrow(
      /"errors\.by-path" and "errors-by_path" would both be the method ep\.errorsByPath/,
    );
    const clickhouseLike: Engine = {
      target: { dialect: 'clickhouse', sources: BUILT_IN_SOURCE_SET, tables: new Map() },
      run: async () => ({ rows: [], engineMs: 0 }),
      checkPattern: async () => null,
      ping: async () => undefined,
      inspectSources: async () => [],
      close: async () => undefined,
    };
    await expect(start([defineEndpoint(base)], { engine: clickhouseLike })).rejects.toThrow(/"bad\.one" has no clickhouse SQL/);
    await expect(start([], { endpointz: [] })).rejects.toThrow(/does not know the option "endpointz" \(did you mean "endpoints"\?\)/);
  });

  it('derives the same UUID from a name in every installation (UUID v5)', () => {
    expect(uuidFromName('errors.by-path')).toBe(uuidFromName('errors.by-path'));
    expect(uuidFromName('errors.by-path')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Fixed forever: a derived UUID that changed would break every caller that stored it.
    expect(uuidFromName('errors.by-path')).toBe('b2d1eeb6-9611-5273-906a-8d48910c24c1');
    expect(uuidFromName('errors.by-path')).not.toBe(uuidFromName('errors.by-paths'));
  });
});

describe('a user source (defineSource): relation, columns from metadata, ingest names', () => {
  const tmp = tempDir();
  const authLogs = defineSource({
    name: 'authLogs',
    relation: 'auth_logs',
    logflare: { names: ['gotrue.logs.prod'] },
    columns: {
      project: 'text',
      level: { type: 'text', path: '$.level' },
      status: { type: 'integer', path: '$.status' },
      duration_ms: { type: 'float', path: '$.duration' },
    },
    projectColumn: 'project',
  });
  const authFailures = defineEndpoint({
    name: 'auth.failures',
    params: { project: p.text(), level: p.oneOf(['error', 'warn', 'info'], { otherwise: 'error' }).default('error') },
    sql: {
      duckdb: `SELECT date_trunc('hour', timestamp) AS hour, count(*) AS failures, max(duration_ms) AS slowest
               FROM auth_logs WHERE project = $project AND level = $level AND status >= 400 AND timestamp > $now - INTERVAL 1 DAY
               GROUP BY 1 ORDER BY 1`,
    },
    columns: { hour: 'timestamp', failures: 'integer', slowest: { type: 'float', nullable: true } },
  });
  let ep: Endpoints<typeof authFailures>;

  beforeAll(async () => {
    const auth = (ts: string, status: number, level = 'error', project = 'abc') => ({
      id: `${ts}-${status}`,
      timestamp: ts,
      event_message: 'login',
      project,
      metadata: { level, status, duration: status / 10 },
    });
    writeLines(tmp.path('auth', 'a.ndjson'), [
      auth('2026-11-21T10:05:00Z', 401),
      auth('2026-11-21T10:35:00Z', 500),
      auth('2026-11-21T11:10:00Z', 403),
      auth('2026-11-21T11:20:00Z', 200),
      auth('2026-11-21T11:30:00Z', 401, 'warn'),
      auth('2026-11-21T11:40:00Z', 401, 'error', 'other'),
      auth('2026-11-19T11:40:00Z', 401),
      'not json',
    ]);
    writeLines(tmp.path('edge', 'e.ndjson'), [edgeEvent({ timestamp: '2026-11-21T11:00:00Z' })]);
    ep = await createEndpoints({
      sources: { authLogs: tmp.path('auth', '*.ndjson'), edgeLogs: tmp.path('edge', '*.ndjson') },
      sourceDefinitions: [authLogs],
      endpoints: [authFailures],
      now: () => NOW,
      cache: false,
    });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('is read by an endpoint through its relation, its derived columns typed', async () => {
    expect((await ep.query('auth.failures', { project: 'abc' })).result).toEqual([
      { hour: '2026-11-21T10:00:00.000000Z', failures: 2, slowest: 50 },
      { hour: '2026-11-21T11:00:00.000000Z', failures: 1, slowest: 40.3 },
    ]);
    expect((await ep.query('auth.failures', { project: 'abc', level: 'warn' })).result).toEqual([{ hour: '2026-11-21T11:00:00.000000Z', failures: 1, slowest: 40.1 }]);
    // The built-ins still answer beside it.
    expect(await ep.logsAll({ project: 'abc' })).toHaveLength(1);
  });

  it('is inspected like the built-ins (files, lines, broken lines)', async () => {
    const inspected = (await ep.inspectSources()).find((s) => s.source === 'authLogs')!;
    expect(inspected).toMatchObject({ files: 1, lines: 8, skippedLines: 1 });
  });

  it('takes ingest by its Logflare name into managed storage, serves it at once, and compacts it', async () => {
    const managed = await createEndpoints({
      storage: { dataDir: tmp.path('data'), maxSegmentBytes: 512 },
      sourceDefinitions: [authLogs],
      endpoints: [authFailures],
      now: () => NOW,
      cache: false,
    });
    try {
      const events = [401, 403, 500, 200].map((status, i) => ({
        id: `m${i}`,
        timestamp: `2026-11-21T11:0${i}:00Z`,
        message: 'login',
        project: 'mgd',
        metadata: { level: 'error', status, duration: 10 },
      }));
      for (const event of events) await managed.ingest('gotrue.logs.prod', [event]);
      const expected = [{ hour: '2026-11-21T11:00:00.000000Z', failures: 3, slowest: 10 }];
      expect((await managed.query('auth.failures', { project: 'mgd' })).result).toEqual(expected);
      expect(managed.storage!.sources.find((n) => n.name === 'gotrue.logs.prod')).toMatchObject({ source: 'authLogs', id: authLogs.logflare.id });
      // Small segments close as they fill; the background compactor moves them into the source's dataset.
      await waitUntil(() => managed.stats().storage!.compactedSegments > 0);
      expect((await managed.query('auth.failures', { project: 'mgd' })).result).toEqual(expected);
      await expect(managed.ingest('gotrue.logs.prod', [{ ...events[0], metadata: 'not an object' }])).resolves.toMatchObject({ ingested: 1 });
    } finally {
      await managed.close();
    }
  });

  it("refuses a source that cannot work, or that takes another one's names", async () => {
    expect(() => defineSource({ name: 'x-y', relation: 'x', columns: {}, projectColumn: 'project' })).toThrow(/letters and digits/);
    expect(() => defineSource({ name: 'x', relation: 'X Y', columns: { project: 'text' }, projectColumn: 'project' })).toThrow(/relation must be/);
    expect(() => defineSource({ name: 'x', relation: 'x', columns: { project: 'text' }, projectColumn: 'nope' })).toThrow(/projectColumn/);
    expect(() => defineSource({ name: 'x', relation: 'x', columns: { timestamp: 'text', project: 'text' }, projectColumn: 'project' })).toThrow(/every event's own timestamp/);
    const clash = defineSource({ name: 'gateway', relation: 'edge_logs', columns: { project: 'text' }, projectColumn: 'project' });
    await expect(createEndpoints({ sources: {}, sourceDefinitions: [clash] })).rejects.toThrow(/shares its name, relation.*"edgeLogs"/);
    await expect(createEndpoints({ sources: { authLogz: 'x/*.ndjson' } as never })).rejects.toThrow(/sources\.authLogz is not a log source/);
  });
});
