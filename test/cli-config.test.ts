import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForStdout } from './support/cli';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

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
    expect(JSON.parse(byPath.stdout)).toEqual({ result: [{ path: '/rest/v1/a', requests: 2 }, { path: '/auth/v1/b', requests: 1 }] });
    const auth = await runCli(['query', 'auth.statuses', '--config', CONFIG, '-p', 'project=abc', '-f', 'json'], env());
    expect(JSON.parse(auth.stdout)).toEqual({ result: [{ status: 200, n: 1 }, { status: 401, n: 1 }] });
    const bad = await runCli(['query', 'requests.by-path', '--config', CONFIG, '-p', 'project=abc', '-p', 'min_status=high'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error [invalid_parameter]: Parameter "min_status" must be a whole number.\n');
  });

  it('serve lists and answers the user endpoints by name and UUID, with the config\'s key', async () => {
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
