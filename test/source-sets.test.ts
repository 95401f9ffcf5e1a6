// The sources of an instance (docs/definitions.md, "A source of your own"): a set made from descriptors and
// passed to everything that needs it, never a process-wide registry.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactLogs, createEndpoints, defineEndpoint, defineSource, p, type Engine } from '../src/index';
import { helpText } from '../src/cli/help';
import { createHandler } from '../src/http';
import { globFlagOptions, globsOfFlags, sourceFromCli, tableFlagOptions } from '../src/cli/source-flags';
import { schemaStatements } from '../src/engine/clickhouse/schema';
import { SourceNames } from '../src/ingest/source-names';
import { BUILT_IN_SOURCE_SET, BUILT_IN_SOURCES } from '../src/sources/built-ins';
import { SourceSet } from '../src/sources/source-set';
import { tempDir, writeLines } from './support/log-files';

const tmp = tempDir('le-source-sets-');
afterAll(() => tmp.cleanup());

const NOW = new Date('2026-11-21T12:00:00Z');

/** A source of one shape under a relation another instance gives another shape. */
const authA = defineSource({
  name: 'authLogs',
  relation: 'auth_logs',
  logflare: { names: ['gotrue.logs.prod'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
});
const authB = defineSource({
  name: 'authEvents',
  relation: 'auth_logs',
  logflare: { names: ['auth.events'] },
  columns: { project_ref: 'text', level: { type: 'text', path: '$.level' } },
  projectColumn: 'project_ref',
});
const count = (sql: string) => defineEndpoint({ name: 'auth.count', params: { project: p.text() }, sql: { duckdb: sql }, columns: { n: 'integer' } });

/**
 * A source added as a built-in would be (its descriptor and a line in BUILT_IN_SOURCES): Studio's
 * PostgREST log, whose Logflare name Studio sends lower-cased.
 */
const postgrestLogs = defineSource({
  name: 'postgrestLogs',
  relation: 'postgrest_logs',
  description: 'PostgREST request log.',
  logflare: { names: ['postgREST.logs.prod'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
  cli: { flag: 'postgrest-logs', tableFlag: 'postgrest-table', alias: 'postgrest' },
});

describe('two instances in one process', () => {
  it('each answers from its own sources, though both name the relation auth_logs', async () => {
    writeLines(
      tmp.path('a', 'a.ndjson'),
      [1, 2, 3].map((i) => ({ id: `a${i}`, timestamp: '2026-11-21T11:00:00Z', project: 'p', metadata: { status: 401 } })),
    );
    writeLines(
      tmp.path('b', 'b.ndjson'),
      [1, 2].map((i) => ({ id: `b${i}`, timestamp: '2026-11-21T11:00:00Z', project_ref: 'p', metadata: { level: 'error' } })),
    );
    const a = await createEndpoints({
      sources: { authLogs: tmp.path('a', '*.ndjson') },
      sourceDefinitions: [authA],
      now: () => NOW,
      cache: false,
      endpoints: [count('SELECT count(*) AS n FROM auth_logs WHERE project = $project AND status = 401')],
    });
    const b = await createEndpoints({
      sources: { authEvents: tmp.path('b', '*.ndjson') },
      sourceDefinitions: [authB],
      now: () => NOW,
      cache: false,
      endpoints: [count("SELECT count(*) AS n FROM auth_logs WHERE project_ref = $project AND level = 'error'")],
    });
    try {
      expect(await a.authCount({ project: 'p' })).toEqual([{ n: 3 }]);
      expect(await b.authCount({ project: 'p' })).toEqual([{ n: 2 }]);
      // Neither knows the other's source: a name it was not given is refused.
      expect((await a.inspectSources()).map((s) => s.source)).toEqual(['edgeLogs', 'functionEdgeLogs', 'authLogs']);
      expect((await b.inspectSources()).map((s) => s.source)).toEqual(['edgeLogs', 'functionEdgeLogs', 'authEvents']);
      await expect(createEndpoints({ sources: { authEvents: 'x/*.ndjson' }, sourceDefinitions: [authA] } as never)).rejects.toThrow(/sources\.authEvents is not a log source/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('compactLogs takes the sources it works with: a user source compacts without createEndpoints (and without looksLike)', async () => {
    writeLines(
      tmp.path('c', 'c.ndjson'),
      [1, 2, 3, 4].map((i) => ({ id: `c${i}`, timestamp: `2026-11-2${i}T11:00:00Z`, project: 'p', metadata: { status: 500 + i } })),
    );
    await expect(compactLogs({ source: 'authLogs', inputs: tmp.path('c', '*.ndjson'), outDir: tmp.path('c-out') })).rejects.toThrow(
      /source "authLogs" is not a log source; the sources are edgeLogs, functionEdgeLogs/,
    );
    const result = await compactLogs({ source: 'authLogs', sourceDefinitions: [authA], inputs: tmp.path('c', '*.ndjson'), outDir: tmp.path('c-out') });
    expect(result).toMatchObject({ rows: 4, skippedLines: 0 });
    expect(
      readdirSync(tmp.path('c-out'))
        .filter((d) => d.startsWith('date='))
        .sort(),
    ).toEqual(['date=2026-11-21', 'date=2026-11-22', 'date=2026-11-23', 'date=2026-11-24']);
  });

  it("refuses an engine that does not know one of the instance's sources", async () => {
    const engine: Engine = {
      // An engine that keeps its own sources (as ClickHouse's tables), the built-ins only.
      target: { dialect: 'clickhouse', sources: BUILT_IN_SOURCE_SET, tables: new Map() },
      run: async () => ({ rows: [], engineMs: 0 }),
      checkPattern: async () => null,
      ping: async () => undefined,
      inspectSources: async () => [],
      close: async () => undefined,
    };
    await expect(createEndpoints({ engine, sourceDefinitions: [authA] })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'engine',
      message: expect.stringMatching(/does not know the source authLogs/),
    });
  });
});

describe('a source set', () => {
  it('refuses clashes when it is made: names, relations and rollups, Logflare names in any case, UUIDs, command-line names', () => {
    const clash = (config: Partial<Parameters<typeof defineSource>[0]>) => () =>
      BUILT_IN_SOURCE_SET.extend([defineSource({ name: 'other', relation: 'other_logs', columns: { project: 'text' }, projectColumn: 'project', ...config })]);
    expect(clash({ name: 'edgeLogs' })).toThrow(/shares its name.*"edgeLogs": name "edgeLogs"/);
    expect(clash({ relation: 'function_edge_logs_hourly' })).toThrow(/"functionEdgeLogs": relation "function_edge_logs_hourly"/);
    expect(clash({ logflare: { names: ['CLOUDFLARE.logs.prod'] } })).toThrow(/"edgeLogs": Logflare name or UUID "CLOUDFLARE\.logs\.prod"/);
    expect(clash({ logflare: { names: ['x'], id: '49D2DB0A-0317-43A6-9CD4-0B1425DA96F0' } })).toThrow(/"edgeLogs": Logflare name or UUID/);
    expect(clash({ cli: { alias: 'edge' } })).toThrow(/"edgeLogs": command-line name "edge"/);
    expect(clash({ cli: { flag: 'function-logs' } })).toThrow(/"functionEdgeLogs": flag --function-logs/);
    expect(() => BUILT_IN_SOURCE_SET.extend([{ name: 'x' }])).toThrow(/sourceDefinitions\[0\] is not a source/);
    // The same descriptor twice is one source (a preset naming a built-in).
    expect(BUILT_IN_SOURCE_SET.extend([...BUILT_IN_SOURCES, authA]).names).toEqual(['edgeLogs', 'functionEdgeLogs', 'authLogs']);
    expect(BUILT_IN_SOURCE_SET.extend([])).toBe(BUILT_IN_SOURCE_SET);
  });
});

describe('adding a built-in source is its descriptor and a line in the list: every surface follows', () => {
  // What BUILT_IN_SOURCES would be with the new line.
  const sources = SourceSet.of([...BUILT_IN_SOURCES, postgrestLogs]);

  it('the command line: help, --source choices (name, relation, alias), its own flags', () => {
    const help = helpText('serve', sources)!;
    expect(help).toContain('postgrestLogs (postgrest_logs, postgrest), --postgrest-logs <glob>: PostgREST request log.');
    expect(help).toContain('?source_name=cloudflare.logs.prod|deno-relay-logs|postgREST.logs.prod');
    expect(helpText('clickhouse', sources)).toContain('postgrestLogs (postgrest_logs, postgrest), --postgrest-table <name>');
    for (const name of ['postgrestLogs', 'postgrest_logs', 'postgrest']) expect(sourceFromCli('compact', name, sources)).toBe(postgrestLogs);
    expect(() => sourceFromCli('compact', 'postgres', sources)).toThrow(
      /--source must name a source: edgeLogs \(edge_logs, edge\), functionEdgeLogs \(function_edge_logs, functions\), postgrestLogs \(postgrest_logs, postgrest\), not "postgres"/,
    );
    expect(globFlagOptions(sources)).toMatchObject({ 'postgrest-logs': { type: 'string', multiple: true } });
    expect(tableFlagOptions(sources)).toMatchObject({ 'postgrest-table': { type: 'string' } });
    const globs = globsOfFlags('serve', { source: ['postgrest_logs=a/*.ndjson', 'edge=e/*.ndjson'], 'postgrest-logs': ['b/*.ndjson'] }, sources);
    expect(Object.fromEntries(globs)).toEqual({ postgrestLogs: ['a/*.ndjson', 'b/*.ndjson'], edgeLogs: ['e/*.ndjson'] });
  });

  it('ingest names, in any letter case, and the fixed UUID', () => {
    const names = new SourceNames(sources);
    for (const ref of ['postgREST.logs.prod', 'postgrest.logs.prod', 'POSTGREST.LOGS.PROD', postgrestLogs.logflare.id.toUpperCase(), 'postgrestLogs']) {
      expect(names.resolve(ref)).toBe('postgrestLogs');
    }
    expect(names.names.map((n) => n.name)).toEqual(['cloudflare.logs.prod', 'deno-relay-logs', 'postgREST.logs.prod']);
    expect(() => names.resolve('postgrestlogs')).toThrow(/No source is named "postgrestlogs"/);
  });

  it('managed storage: its WAL folder and memory table, ingest by the lower-cased name, read at once', async () => {
    const dataDir = tmp.path('built-in-data');
    const ep = await createEndpoints({
      storage: { dataDir },
      sourceDefinitions: [postgrestLogs],
      now: () => NOW,
      cache: false,
      endpoints: [
        defineEndpoint({
          name: 'postgrest.errors',
          params: { project: p.text() },
          sql: { duckdb: 'SELECT count(*) AS n FROM postgrest_logs WHERE project = $project AND status >= 500' },
          columns: { n: 'integer' },
        }),
      ],
    });
    try {
      await ep.ingest('postgrest.logs.prod', [{ timestamp: '2026-11-21T11:00:00Z', project: 'p', message: 'x', metadata: { status: 503 } }]);
      expect(existsSync(join(dataDir, 'postgrestLogs', 'wal'))).toBe(true);
      // Held in the memory table the instance made for it (nothing compacted yet), and read from there.
      expect(await ep.postgrestErrors({ project: 'p' })).toEqual([{ n: 1 }]);
      expect((await ep.inspectSources()).find((s) => s.source === 'postgrestLogs')).toMatchObject({ lines: 1 });
      expect(ep.storage!.sources.find((n) => n.source === 'postgrestLogs')).toEqual({ name: 'postgREST.logs.prod', id: postgrestLogs.logflare.id, source: 'postgrestLogs' });
      expect(ep.storage!.resolveSource('POSTGREST.logs.prod')).toBe('postgrestLogs');
      // The ingest route names them too, and takes the name Studio sends.
      const handler = createHandler(ep, { auth: false });
      const unnamed = await handler(new Request('http://localhost/api/logs', { method: 'POST', body: '[]' }));
      expect(((await unnamed.json()) as { error: { message: string } }).error.message).toBe(
        'Name the source: ?source_name=cloudflare.logs.prod (or deno-relay-logs, postgREST.logs.prod), or ?source=<uuid>.',
      );
      const studio = await handler(
        new Request('http://localhost/api/logs?source_name=postgrest.logs.prod', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify([{ project: 'q', metadata: { status: 500 } }]),
        }),
      );
      expect(studio.status).toBe(200);
    } finally {
      await ep.close();
    }
  });

  it("the ClickHouse tables: its DDL beside the built-ins', named by its relation or its table option", () => {
    const ddl = schemaStatements({ database: 'logs', cluster: 'c1', sourceDefinitions: [postgrestLogs] });
    expect(ddl.filter((s) => s.startsWith('CREATE TABLE')).map((s) => /^CREATE TABLE IF NOT EXISTS `logs`\.`(\w+)`/.exec(s)![1])).toEqual([
      'edge_logs_local',
      'edge_logs',
      'function_edge_logs_local',
      'function_edge_logs',
      'postgrest_logs_local',
      'postgrest_logs',
    ]);
    expect(ddl.find((s) => s.includes('`postgrest_logs_local` ('))).toMatch(/`project` String,[\s\S]*`status` Nullable\(Int64\)[\s\S]*ORDER BY \(project, timestamp\)/);
    expect(schemaStatements({ database: 'logs', sourceDefinitions: [postgrestLogs], tables: { postgrestLogs: 'rest' } }).join('\n')).toContain('CREATE TABLE IF NOT EXISTS `logs`.`rest` (');
    expect(() => schemaStatements({ database: 'logs', tables: { postgrestLogs: 'rest' } })).toThrow(/tables\.postgrestLogs is not a log source/);
  });
});
