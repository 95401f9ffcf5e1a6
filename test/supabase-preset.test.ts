/**
 * The Supabase preset (docs/supabase.md): its nine sources as logs.all's tables for a caller's
 * BigQuery SQL, each limited like the endpoint's rows, answered in Logflare's wire format; and the
 * options it is made of, each checked. Studio's own requests are replayed in studio-replay.test.ts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, defineSource, InvalidOptionError, SUPABASE_SOURCES, supabasePreset, type Endpoints, type EndpointsOptions } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { everyProject } from '../src/query/every-project';
import { findDefinition } from '../src/definitions/registry';
import { listen } from './support/http';
import { main } from '../src/cli/main';
import { withSupabase } from '../src/cli/supabase-flag';
import { memoryIO } from './support/cli';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const NOW_MS = Date.parse(NOW);
const at = (minutesAgo: number) => new Date(NOW_MS - minutesAgo * 60_000).toISOString();
const micros = (iso: string) => Date.parse(iso) * 1000;

/** One event per source, as Vector sends it (docs/supabase.md, "Sources"), a minute apart. */
const EVENTS: Record<string, object[]> = {
  edgeLogs: [edgeEvent({ id: 'edge-1', project: 'default', timestamp: at(1), path: '/rest/v1/todos' })],
  authLogs: [{ id: 'auth-1', timestamp: at(2), event_message: '{"level":"error"}', project: 'default', metadata: { level: 'error', status: 500, path: '/token' } }],
  postgrestLogs: [{ id: 'rest-1', timestamp: at(3), event_message: 'listening', project: 'default', metadata: { host: 'default' } }],
  realtimeLogs: [{ id: 'rt-1', timestamp: at(4), event_message: 'joined', metadata: { project: 'default', external_id: 'default', level: 'info' } }],
  storageLogs: [{ id: 'st-1', timestamp: at(5), event_message: 'request completed', metadata: { project: 'default', tenantId: 'default', level: 'info', context: [{ host: 'h', pid: 7 }] } }],
  postgresLogs: [{ id: 'pg-1', timestamp: at(6), event_message: 'ERROR: boom', project: 'default', metadata: { host: 'db-default', parsed: { error_severity: 'ERROR', user_name: 'postgres' } } }],
  functionEdgeLogs: [{ id: 'fe-1', timestamp: at(7), event_message: 'POST | 200', metadata: { project_ref: 'default', function_id: 'f1', execution_time_ms: 12, response: { status_code: 200 } } }],
  functionLogs: [{ id: 'fn-1', timestamp: at(8), event_message: 'hello', metadata: { project_ref: 'default', function_id: 'f1', level: 'log', event_type: 'Log' } }],
  pgbouncerLogs: [{ id: 'pb-1', timestamp: at(9), event_message: 'stats', project: 'default', metadata: { host: 'default' } }],
};

describe('the Supabase preset', () => {
  const tmp = tempDir('le-supabase-');
  let ep: Endpoints;
  beforeAll(async () => {
    const sources: Record<string, string> = {};
    for (const [source, events] of Object.entries(EVENTS)) sources[source] = writeLines(tmp.path(source, 'a.ndjson'), events);
    ep = await createEndpoints({ ...supabasePreset, sources, now: () => new Date(NOW), cache: false });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });
  const query = (sql: string, params: Record<string, string> = {}) => ep.query('logs.all', { project: 'default', ...params }, { sql });

  it('is the nine sources, one project, logs.all sandboxable in the BigQuery dialect, and the wire format', () => {
    expect(SUPABASE_SOURCES.map((s) => s.relation).sort()).toEqual([
      'auth_logs',
      'edge_logs',
      'function_edge_logs',
      'function_logs',
      'pgbouncer_logs',
      'postgres_logs',
      'postgrest_logs',
      'realtime_logs',
      'storage_logs',
    ]);
    expect(supabasePreset).toMatchObject({ singleProject: true, sandboxable: ['logs.all'], sqlDialect: 'bigquery', wireFormat: 'logflare' });
    expect(Object.isFrozen(supabasePreset)).toBe(true);
    expect(ep.sources).toEqual([...new Set([...ep.sources.slice(0, 2), ...SUPABASE_SOURCES])]);
  });

  it('gives each source its table: its own events, its own fields, in the wire format', async () => {
    for (const [source, events] of Object.entries(EVENTS)) {
      const relation = SUPABASE_SOURCES.find((s) => s.name === source)!.relation;
      const { result } = await query(`select id, timestamp, event_message, metadata from ${relation}`);
      const event = events[0] as { id: string; timestamp: string; event_message?: string; message?: string };
      expect(result, source).toHaveLength(1);
      expect(result[0], source).toMatchObject({ id: event.id, timestamp: micros(event.timestamp) });
      expect(Array.isArray(result[0]!.metadata), source).toBe(true);
    }
    // Nested records are read through unnest, as Studio writes them; arrays stay arrays.
    const [pg] = (await query('select p.error_severity, p.user_name from postgres_logs cross join unnest(metadata) as m cross join unnest(m.parsed) as p')).result;
    expect(pg).toEqual({ error_severity: 'ERROR', user_name: 'postgres' });
    const [storage] = (await query('select metadata from storage_logs')).result;
    expect(storage!.metadata).toEqual([{ project: 'default', tenantId: 'default', level: 'info', context: [{ host: 'h', pid: 7 }] }]);
    const [auth] = (await query('select count(*) as n from auth_logs cross join unnest(metadata) as metadata where IFNULL(SAFE_CAST(metadata.status AS INT64), 0) >= 500')).result;
    expect(auth).toEqual({ n: 1 });
  });

  it('limits every table to the window and the bounds; empty bounds are none', async () => {
    const counts = async (params: Record<string, string>) => {
      const sql = Object.values(EVENTS)
        .map((_, i) => `select '${i}' as s from ${SUPABASE_SOURCES[i]!.relation}`)
        .join(' union all ');
      return (await query(`select count(*) as n from (${sql})`, params)).result[0]!.n;
    };
    expect(await counts({ iso_timestamp_start: '', iso_timestamp_end: '' })).toBe(9);
    // Exclusive start, inclusive end: the events 3, 4 and 5 minutes ago.
    expect(await counts({ iso_timestamp_start: at(6), iso_timestamp_end: at(3) })).toBe(3);
    expect(await counts({ iso_timestamp_start: at(1) })).toBe(0);
  });

  it('refuses a table this installation does not have, naming those it has', async () => {
    const error = await query('select cast(timestamp as datetime) as timestamp, event_message, metadata from auth_audit_logs limit 10').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_sql', status: 400, rule: 'table' });
    for (const s of SUPABASE_SOURCES) expect((error as Error).message).toContain(s.relation);
    expect((error as Error).message).toContain('auth_audit_logs');
  });

  it("answers over HTTP in the wire format without any handler option, as Studio's proxy calls it", async () => {
    const server = await listen(toNodeListener(createHandler(ep, { apiKeys: ['private'] })));
    try {
      const url = new URL(`${server.url}/api/endpoints/query/logs.all`);
      url.searchParams.set('project', 'default');
      url.searchParams.set('sql', 'select id, timestamp, metadata from edge_logs');
      url.searchParams.set('iso_timestamp_start', '');
      url.searchParams.set('iso_timestamp_end', '');
      const response = await fetch(url, { headers: { 'x-api-key': 'private', Accept: 'application/json' } });
      expect(response.status).toBe(200);
      const { result } = (await response.json()) as { result: Array<{ timestamp: number; metadata: Array<{ request: Array<{ path: string }> }> }> };
      expect(result[0]!.timestamp).toBe(micros(at(1)));
      expect(result[0]!.metadata[0]!.request[0]!.path).toBe('/rest/v1/todos');
    } finally {
      await server.close();
    }
  });
});

describe("the preset's logs.all has no tier window: the Explorer's ranges are answered whole", () => {
  const tmp = tempDir('le-supabase-week-');
  // Day i (0 = the last 24 hours) holds i + 1 events: 10 days, 55 events, 28 of them in the last 7 days.
  const events = Array.from({ length: 10 }, (_, day) =>
    Array.from({ length: day + 1 }, (_, k) => edgeEvent({ id: `d${day}-${k}`, project: 'default', timestamp: at(day * 24 * 60 + 30 + k), path: '/rest/v1/x' })),
  ).flat();
  let files: { edgeLogs: string };
  let preset: Endpoints;
  let seed: Endpoints;
  beforeAll(async () => {
    files = { edgeLogs: writeLines(tmp.path('edge', 'a.ndjson'), events) };
    preset = await createEndpoints({ ...supabasePreset, sources: files, now: () => new Date(NOW), cache: false });
    seed = await createEndpoints({ sources: files, now: () => new Date(NOW), cache: false, sandboxable: ['logs.all'], sqlDialect: 'bigquery' });
  });
  afterAll(async () => {
    await preset.close();
    await seed.close();
    tmp.cleanup();
  });

  /** The Explorer's "Last 7 days", as Studio sends it: bounds in the query string, no project_tier. */
  const lastSevenDays = async (ep: Endpoints, extra: Record<string, string> = {}) => {
    const server = await listen(toNodeListener(createHandler(ep, { apiKeys: ['private'] })));
    try {
      const url = new URL(`${server.url}/api/endpoints/query/logs.all`);
      url.searchParams.set('project', 'default');
      url.searchParams.set('sql', 'select count(*) as count from edge_logs');
      url.searchParams.set('iso_timestamp_start', at(7 * 24 * 60));
      url.searchParams.set('iso_timestamp_end', NOW);
      for (const [key, value] of Object.entries(extra)) url.searchParams.set(key, value);
      const response = await fetch(url, { headers: { 'x-api-key': 'private', Accept: 'application/json' } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { result: Array<{ count: number }> }).result[0]!.count;
    } finally {
      await server.close();
    }
  };

  it('counts the week over 7 days, whatever project_tier says (accepted and ignored)', async () => {
    expect(await lastSevenDays(preset)).toBe(28);
    for (const tier of ['FREE', 'PRO', 'bogus']) expect(await lastSevenDays(preset, { project_tier: tier })).toBe(28);
    // Without bounds, everything stored: the endpoint's own rows and a caller's SELECT alike.
    expect(await preset.logsAll({ project: 'default' })).toHaveLength(55);
    expect((await preset.query('logs.all', { project: 'default' }, { sql: 'select count(*) as n from edge_logs' })).result).toEqual([{ n: 55 }]);
    const tier = preset.definitions.find((d) => d.name === 'logs.all')!.params.find((s) => s.name === 'project_tier')!;
    expect(tier.description).toMatch(/Ignored: this server keeps no tier window\.$/);
  });

  it('keeps the tier window without the preset (the default): FREE is the last day, PRO the week', async () => {
    expect(await lastSevenDays(seed)).toBe(1);
    expect(await lastSevenDays(seed, { project_tier: 'PRO' })).toBe(28);
    expect(await seed.logsAll({ project: 'default' })).toHaveLength(1);
  });

  it('is the option tierWindow, checked, and set by serve --supabase (a config setting it otherwise is an error)', async () => {
    expect(supabasePreset).toMatchObject({ tierWindow: false });
    await expect(createEndpoints({ sources: {}, tierWindow: 'no' } as never)).rejects.toMatchObject({ code: 'invalid_option', option: 'tierWindow' });
    expect(withSupabase<EndpointsOptions>('serve', {}).tierWindow).toBe(false);
    expect(() => withSupabase('serve', { tierWindow: true })).toThrow(/--supabase sets tierWindow to false, and the config's tierWindow is true/);
    const own = await createEndpoints({ sources: files, now: () => new Date(NOW), cache: false, tierWindow: false });
    try {
      expect(await own.logsAll({ project: 'default', project_tier: 'FREE' })).toHaveLength(55);
    } finally {
      await own.close();
    }
  });
});

describe("logs.all's source tables", () => {
  const tmp = tempDir('le-source-tables-');
  let ep: Endpoints;
  const PROJECTS = ['alpha', 'beta'];
  beforeAll(async () => {
    const events = Array.from({ length: 400 }, (_, i) =>
      edgeEvent({
        id: `e${String(i % 37).padStart(3, '0')}-${i}`,
        project: PROJECTS[i % 2]!,
        timestamp: at((i * 37) % (60 * 24 * 9)),
        path: '/rest/v1/x',
      }),
    );
    ep = await createEndpoints({ sources: { edgeLogs: writeLines(tmp.path('edge', 'a.ndjson'), events) }, now: () => new Date(NOW), cache: false, sandboxable: ['logs.all'] });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it("hold what the endpoint's own rows hold (two statements of one rule, held equal): every project, tier and bound", async () => {
    const bound = fc.option(fc.integer({ min: 0, max: 60 * 24 * 10 }).map(at), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PROJECTS), fc.constantFrom('FREE', 'PRO', 'PAYG'), bound, bound, async (project, tier, start, end) => {
        if (start && end && start > end) [start, end] = [end, start];
        const params = { project, project_tier: tier, ...(start ? { iso_timestamp_start: start } : {}), ...(end ? { iso_timestamp_end: end } : {}) };
        const own = await ep.logsAll(params);
        const { result } = await ep.query('logs.all', params, { sql: 'select id, timestamp, event_message, metadata from edge_logs order by timestamp desc, id limit 100' });
        expect(result).toEqual(own);
      }),
      { numRuns: 40, seed: 5 },
    );
  });

  it("come from the instance's sources: a user source with its own table name is read the same way", async () => {
    const jobLogs = defineSource({ name: 'jobLogs', relation: 'job_logs', logflare: { names: ['jobs'] }, columns: { project: 'text' }, projectColumn: 'project' });
    const file = writeLines(tmp.path('jobs', 'a.ndjson'), [
      { id: 'j1', timestamp: at(5), event_message: 'done', project: 'alpha', metadata: { ms: 5 } },
      { id: 'j2', timestamp: at(5), event_message: 'done', project: 'beta', metadata: { ms: 6 } },
    ]);
    const own = await createEndpoints({ sources: { jobLogs: file }, sourceDefinitions: [jobLogs], now: () => new Date(NOW), cache: false, sandboxable: ['logs.all'], sqlDialect: 'bigquery' });
    try {
      const { result } = await own.query('logs.all', { project: 'alpha' }, { sql: 'select id, m.ms from job_logs cross join unnest(metadata) as m' });
      expect(result).toEqual([{ id: 'j1', ms: 5 }]);
    } finally {
      await own.close();
    }
  });

  it("are what BigQuery SQL reads: an endpoint with CTEs of its own takes DuckDB's dialect only", async () => {
    const tables = await createEndpoints({ sources: {}, now: () => new Date(NOW), cache: false, sandboxable: ['functions.invocation-stats'], sqlDialect: 'bigquery' }).catch((e: unknown) => e);
    expect(tables).toBeInstanceOf(InvalidOptionError);
    expect(tables).toMatchObject({ option: 'sandboxable', message: expect.stringMatching(/BigQuery SQL reads source tables/) });
  });
});

describe('the options the preset is made of', () => {
  it('sqlDialect and wireFormat take their values only', async () => {
    for (const [option, value] of [
      ['sqlDialect', 'postgres'],
      ['wireFormat', 'bigquery'],
      ['sqlDialect', 1],
    ] as const) {
      await expect(createEndpoints({ sources: {}, [option]: value } as never)).rejects.toMatchObject({ code: 'invalid_option', option });
    }
  });
});

describe('serve --supabase', () => {
  it("needs somewhere to keep events, and keys from Supabase's two tokens or the flags", async () => {
    const noDir = memoryIO({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'priv', LOGFLARE_PUBLIC_ACCESS_TOKEN: 'pub' });
    expect(await main(['serve', '--supabase', '--port', '0'], noDir.io, 'test')).toBe(2);
    expect(noDir.out.stderr).toContain('--supabase keeps the events Vector sends: add --data-dir <dir>');
    const tmp = tempDir('le-supabase-cli-');
    try {
      const noKeys = memoryIO({});
      expect(await main(['serve', '--supabase', '--data-dir', tmp.path('data'), '--port', '0'], noKeys.io, 'test')).toBe(2);
      expect(noKeys.out.stderr).toContain('LOGFLARE_PRIVATE_ACCESS_TOKEN and LOGFLARE_PUBLIC_ACCESS_TOKEN');
    } finally {
      tmp.cleanup();
    }
  });

  it('is a layer on top of a --config: lists add up, a setting the config gives otherwise is an error naming it', () => {
    const mine = defineSource({ name: 'jobLogs', relation: 'job_logs', columns: { project: 'text' }, projectColumn: 'project' });
    const config = withSupabase('serve', { sourceDefinitions: [mine], sandboxable: ['functions.invocation-stats'], singleProject: true });
    expect(config.sourceDefinitions!.map((s) => s.relation)).toEqual([...SUPABASE_SOURCES.map((s) => s.relation), 'job_logs']);
    expect(config.sandboxable).toEqual(['logs.all', 'functions.invocation-stats']);
    expect(() => withSupabase('serve', { sqlDialect: 'duckdb' })).toThrow(/--supabase sets sqlDialect to "bigquery", and the config's sqlDialect is "duckdb"/);
    expect(() => withSupabase('serve', { singleProject: false })).toThrow(/singleProject/);
  });
});

describe('singleProject on ClickHouse: the project tests a statement drops', () => {
  it('drops `<column> = {project:String}` and the pattern search, and refuses any other use', () => {
    expect(everyProject('SELECT 1 FROM t WHERE project = {project:String} AND `project_ref` = {project:String} AND x = 1', 'project')).toBe('SELECT 1 FROM t WHERE 1 = 1 AND 1 = 1 AND x = 1');
    expect(everyProject("WHERE t >= 1 AND match(request_url, concat('(?-s)(?:', {project:String}, ')'))", 'project')).toBe('WHERE t >= 1 AND 1 = 1');
    expect(() => everyProject('SELECT {project:String} AS p', 'project')).toThrow(/singleProject/);
    expect(everyProject('WHERE id = {id:String}', 'project')).toBe('WHERE id = {id:String}');
  });

  it('drops a pattern search whatever expression of the project it holds, its parentheses counted in the code alone', () => {
    const search = "match(request_url, if({project_required:String} = {project:String}, {project:String}, concat('(?-s)(?:', {project:String}, ')')))";
    expect(everyProject(`WHERE ifNull(position(request_url, {project_literal:String}) > 0, 1)\n  AND ${search}\n  AND x = 1`, 'project')).toBe(
      'WHERE ifNull(position(request_url, {project_literal:String}) > 0, 1)\n  AND 1 = 1\n  AND x = 1',
    );
    // A comment naming match( and a parenthesis in a string neither start nor end a call.
    expect(everyProject(`-- match() (as the engine's own\nWHERE match(u, concat(')', {project:String})) AND y = ')'`, 'project')).toBe("-- match() (as the engine's own\nWHERE 1 = 1 AND y = ')'");
    // The shipped statement: every mention of the project goes.
    expect(everyProject(findDefinition('usage.api-counts').sql.clickhouse!, 'project')).not.toMatch(/\{project:/);
  });
});
