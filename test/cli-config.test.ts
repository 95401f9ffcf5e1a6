import { readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForStdout } from './support/cli';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { combinedGlobs, combinedOptions, combinedStorage } from '../src/cli/config-and-flags';
import { memoryCache } from '../src/index';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

const CONFIG = 'test/support/configs/user-endpoints.config.ts';

describe('--config: user endpoints and sources from an ES module, without writing a server', () => {
  const tmp = tempDir();
  const env = () => ({ LE_TEST_LOGS: tmp.dir });

  beforeAll(() => {
    writeLines(tmp.path('edge', 'e.ndjson'), [
      edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', path: '/rest/v1/a' }),
      edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:01:00Z', path: '/rest/v1/a' }),
      edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:02:00Z', path: '/auth/v1/b' }),
      edgeEvent({ project: 'zzz', timestamp: '2026-11-21T11:03:00Z', path: '/auth/v1/b' }),
    ]);
    writeLines(tmp.path('auth', 'a.ndjson'), [
      { id: '1', timestamp: '2026-11-21T11:00:00Z', event_message: 'x', project: 'abc', metadata: { status: 401 } },
      { id: '2', timestamp: '2026-11-21T11:00:01Z', event_message: 'x', project: 'abc', metadata: { status: 200 } },
    ]);
  });
  afterAll(() => tmp.cleanup());

  it('query runs a user endpoint over a user source, and over the built-in gateway log', async () => {
    const byPath = await runCli(['query', 'requests.by-path', '--config', CONFIG, '-p', 'project=abc', '-f', 'json'], env());
    expect(byPath.stderr).toBe('');
    expect(JSON.parse(byPath.stdout)).toEqual({
      result: [
        { path: '/rest/v1/a', requests: 2 },
        { path: '/auth/v1/b', requests: 1 },
      ],
    });
    const auth = await runCli(['query', 'auth.statuses', '--config', CONFIG, '-p', 'project=abc', '-f', 'json'], env());
    expect(JSON.parse(auth.stdout)).toEqual({
      result: [
        { status: 200, n: 1 },
        { status: 401, n: 1 },
      ],
    });
    const bad = await runCli(['query', 'requests.by-path', '--config', CONFIG, '-p', 'project=abc', '-p', 'min_status=high'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error [invalid_parameter]: Parameter "min_status" must be a whole number.\n');
  });

  it("serve lists and answers the user endpoints by name and UUID, with the config's key", async () => {
    const child = spawnCli(['serve', '--config', CONFIG, '--port', '0'], env());
    try {
      const [, url] = await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+) \(1 key\)/);
      const get = (path: string, key = 'config-key') => fetch(`${url}${path}`, { headers: { 'X-API-KEY': key } });
      const listed = (await (await get('/api/endpoints')).json()) as { result: Array<{ name: string; id: string; builtIn: boolean }> };
      const mine = listed.result.filter((d) => !d.builtIn);
      expect(mine.map((d) => d.name)).toEqual(['requests.by-path', 'auth.statuses']);
      const byName = await get('/api/endpoints/requests.by-path?project=abc&min_status=200');
      expect(byName.status).toBe(200);
      expect(byName.headers.get('x-cache')).toBe('MISS');
      const byId = await get(`/api/endpoints/query/${mine[0]!.id}?project=abc&min_status=200`);
      expect(byId.headers.get('x-cache')).toBe('HIT');
      expect(await byId.json()).toEqual(await byName.json());
      expect((await get('/api/endpoints/requests.by-path?project=abc&min_status=x')).status).toBe(400);
      expect((await get('/api/endpoints/requests.by-path?project=abc', 'wrong')).status).toBe(401);
      const openapi = (await (await fetch(`${url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(openapi.paths)).toContain('/api/endpoints/auth.statuses');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('a definition that cannot work stops the start with one line naming it', async () => {
    const r = await runCli(['serve', '--config', 'test/support/configs/broken-endpoint.config.ts', '--no-auth', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --config test\/support\/configs\/broken-endpoint.config.ts failed to load: Endpoint "broken\.one" cannot work: its duckdb SQL uses \$id, which is not declared/);
    const missing = await runCli(['query', 'x', '--config', 'no-such.config.mjs']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--config no-such\.config\.mjs: no such file/);
  });
});

const SOURCES_CONFIG = 'test/support/configs/user-sources.config.ts';
const STORAGE_CONFIG = 'test/support/configs/storage.config.ts';

describe('a source of --config on every command: --source, compact, ingest, check', () => {
  const tmp = tempDir();
  const auth = [
    { id: '1', timestamp: '2026-11-21T11:00:00Z', event_message: 'x', project: 'abc', metadata: { status: 401 } },
    { id: '2', timestamp: '2026-11-21T11:00:01Z', event_message: 'x', project: 'abc', metadata: { status: 200 } },
  ];
  const expected = {
    result: [
      { status: 200, n: 1 },
      { status: 401, n: 1 },
    ],
  };
  beforeAll(() => writeLines(tmp.path('auth', 'a.ndjson'), auth));
  afterAll(() => tmp.cleanup());

  it('query takes its logs by the generic --source <source>=<glob> (name or relation), and its help lists it', async () => {
    for (const name of ['auth_logs', 'authLogs']) {
      const r = await runCli(['query', 'auth.statuses', '--config', SOURCES_CONFIG, '--source', `${name}=${tmp.path('auth', '*.ndjson')}`, '-p', 'project=abc', '-f', 'json']);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual(expected);
    }
    const help = await runCli(['query', '--config', SOURCES_CONFIG, '--help']);
    expect(help.stdout).toContain('authLogs (auth_logs): GoTrue log.');
    const bad = await runCli(['query', 'auth.statuses', '--config', SOURCES_CONFIG, '--source', 'auth=x', '-p', 'project=abc']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--source <source>= must name a source: .*authLogs \(auth_logs\), not "auth"/);
  });

  it('compact --source <its relation> in a fresh process, and the dataset answers the same', async () => {
    const out = tmp.path('auth-parquet');
    const r = await runCli(['compact', '--config', SOURCES_CONFIG, '--source', 'auth_logs', '--input', tmp.path('auth', '*.ndjson'), '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Compacted 1 file: 2 events in 1 Parquet files under ${out}.\n`);
    const q = await runCli(['query', 'auth.statuses', '--config', SOURCES_CONFIG, '--source', `authLogs=${out}`, '-p', 'project=abc', '-f', 'json']);
    expect(JSON.parse(q.stdout)).toEqual(expected);
  });

  it('ingest --source <its Logflare name, in any case> into a data dir; check covers it without the config', async () => {
    const dataDir = tmp.path('data');
    const r = await runCli(['ingest', tmp.path('auth', 'a.ndjson'), '--config', SOURCES_CONFIG, '--source', 'GOTRUE.LOGS.PROD', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Ingested 2 events from 1 file');
    const intact = await runCli(['check', '--data-dir', dataDir]);
    expect(intact.code).toBe(0);
    expect(intact.stdout).toMatch(/^authLogs: 1 WAL segment, 0 commits, 0 data files checked\.$/m);
    // A torn write at the end of the source's segment: found, though no descriptor of it is given.
    const wal = join(dataDir, 'authLogs', 'wal');
    const segment = join(wal, readdirSync(wal).find((n) => n.endsWith('.ndjson') && statSync(join(wal, n)).size > 0)!);
    truncateSync(segment, statSync(segment).size - 3);
    const torn = await runCli(['check', '--data-dir', dataDir]);
    expect(torn.code).toBe(1);
    expect(torn.stdout).toContain(`wal_segment ${segment}: does not end with a commit marker`);
  });
});

describe('--config and the flags combine by one rule: lists add up, a value set in both must agree', () => {
  const tmp = tempDir();
  const env = () => ({ LE_TEST_DATA: tmp.path('data') });
  afterAll(() => tmp.cleanup());

  it('storage in the config: ingest keys work, its options stay with the same --data-dir, and the events are served', async () => {
    for (const sameDir of [[], ['--data-dir', tmp.path('data')]]) {
      const child = spawnCli(['serve', '--config', STORAGE_CONFIG, ...sameDir, '--api-key', 'q', '--ingest-key', 'ship', '--port', '0', '--now', '2026-11-21T12:00:00Z'], env());
      try {
        const [, url] = await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+) \(1 key, 1 ingest key\)/);
        const event = edgeEvent({ project: `p${sameDir.length}`, timestamp: '2026-11-21T11:00:00Z' });
        // The config's storage.sourceNames is kept: my-gateway is the gateway log.
        const sent = await fetch(`${url}/api/logs?source_name=my-gateway`, { method: 'POST', headers: { 'X-API-KEY': 'ship', 'Content-Type': 'application/json' }, body: JSON.stringify([event]) });
        expect(sent.status).toBe(200);
        const rows = await fetch(`${url}/api/endpoints/logs.all?project=${event.project}&project_tier=FREE`, { headers: { 'X-API-KEY': 'q' } });
        expect(((await rows.json()) as { result: unknown[] }).result).toHaveLength(1);
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    }
  });

  it('option by option: lists add up, each value from where it is given, the same value in both is fine', () => {
    expect(combinedGlobs(new Map([['edgeLogs', ['b/*.ndjson', 'a/*.ndjson']]]), { edgeLogs: 'a/*.ndjson', functionEdgeLogs: ['f/*.ndjson'] }, BUILT_IN_SOURCE_SET)).toEqual({
      edgeLogs: ['a/*.ndjson', 'b/*.ndjson'],
      functionEdgeLogs: ['f/*.ndjson'],
    });
    expect(combinedStorage('serve', { 'wal-segment-bytes': '4096' }, { dataDir: 'x', retentionDays: 7 })).toEqual({ dataDir: 'x', retentionDays: 7, maxSegmentBytes: 4096 });
    expect(() => combinedStorage('serve', { 'wal-segment-bytes': '4096' }, { dataDir: 'x', maxSegmentBytes: 8192 })).toThrow(
      /--wal-segment-bytes 4096 and the config's storage\.maxSegmentBytes: 8192 disagree/,
    );
    expect(() => combinedStorage('serve', { 'wal-segment-age-ms': '10' }, undefined)).toThrow(/--wal-segment-age-ms is for ingest: add --data-dir <dir> \(or storage in the --config\)/);
    // --no-typed-columns (serve and ingest with a data dir) is storage.typedColumns: false.
    expect(combinedStorage('ingest', { 'no-typed-columns': true }, { dataDir: 'x' })).toEqual({ dataDir: 'x', typedColumns: false });
    expect(combinedStorage('serve', { 'no-typed-columns': true }, { dataDir: 'x', typedColumns: false })).toEqual({ dataDir: 'x', typedColumns: false });
    expect(combinedStorage('serve', {}, { dataDir: 'x', typedColumns: false })).toEqual({ dataDir: 'x', typedColumns: false });
    expect(() => combinedStorage('serve', { 'no-typed-columns': true }, { dataDir: 'x', typedColumns: true })).toThrow(/--no-typed-columns and the config's storage\.typedColumns: true disagree/);
    expect(() => combinedStorage('serve', { 'no-typed-columns': true }, undefined)).toThrow(/--no-typed-columns is for the files compacted from ingested events: add --data-dir/);
    expect(combinedOptions('serve', { singleProject: true, threads: 2 }, { singleProject: true, duckdb: { memoryLimit: '1GB' } })).toEqual({
      singleProject: true,
      duckdb: { threads: 2, memoryLimit: '1GB' },
    });
    expect(() => combinedOptions('serve', { singleProject: true }, { singleProject: false })).toThrow(/--single-project and the config's singleProject: false disagree/);
    expect(() => combinedOptions('serve', { noCache: true }, { cache: memoryCache() })).toThrow(/--no-cache and the config's cache: an object disagree/);
    expect(() => combinedOptions('serve', { now: () => new Date(0) }, { now: () => new Date(0) })).toThrow(/--now and the config's now: a function disagree/);
  });

  it('a flag that disagrees with the config is an error naming both, never dropped silently', async () => {
    const other = await runCli(['serve', '--config', STORAGE_CONFIG, '--data-dir', tmp.path('elsewhere'), '--no-auth'], env());
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/^error: --data-dir ".*elsewhere" and the config's storage\.dataDir: ".*data" disagree: set it in one place/);
    const threads = await runCli(['serve', '--config', STORAGE_CONFIG, '--threads', '2', '--no-auth'], env());
    expect(threads.code).toBe(2);
    expect(threads.stderr).toMatch(/--threads 2 and the config's duckdb\.threads: 1 disagree/);
    const agreeing = await runCli(['query', 'logs.all', '--config', STORAGE_CONFIG, '--threads', '1', '--source', 'edge=none/*.ndjson', '-p', 'project=x', '-f', 'json'], env());
    expect(agreeing.code).toBe(0);
  });
});
