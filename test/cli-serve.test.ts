import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli/main';
import { KEEP_ALIVE_TIMEOUT_MS, startServer } from '../src/cli/start-server';
import { createEndpoints } from '../src/index';
import { memoryIO, spawnCli, waitForStderr, waitForStdout } from './support/cli';
import { heldEngine } from './support/http';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { HANG_MS } from './support/hang-guard';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-serve-');
const children: ReturnType<typeof spawnCli>[] = [];

beforeAll(() => {
  writeLines(tmp.path('edge.ndjson'), [edgeEvent({ id: 'e1', timestamp: '2026-11-21T11:00:00Z' })]);
});

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

describe('log-endpoints serve, as a process', () => {
  it('serves with keys from LOG_ENDPOINTS_API_KEYS, evaluates at --now, and stops on SIGTERM with exit 0', async () => {
    const child = spawnCli(['serve', '--edge-logs', tmp.path('*.ndjson'), '--port', '0', '--now', NOW], {
      LOG_ENDPOINTS_API_KEYS: 'env-key-1, env-key-2',
    });
    children.push(child);
    const [, url] = await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+) \(2 keys\)/);
    expect(child.output.stdout).toContain('Every window is evaluated at 2026-11-21T12:00:00.000Z');

    const query = `${url}/api/endpoints/logs.all?project=abc&project_tier=FREE`;
    const ok = await fetch(query, { headers: { 'X-API-KEY': 'env-key-2' } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).result.map((r: any) => r.id)).toEqual(['e1']);
    expect((await fetch(query)).status).toBe(401);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(child.output.stderr).toContain('SIGTERM: stopping');
    expect(child.output.stderr).toContain('Stopped.');
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it('a port in use is a clear error with exit 2 (an option to change)', async () => {
    const first = spawnCli(['serve', '--edge-logs', tmp.path('*.ndjson'), '--port', '0', '--no-auth']);
    children.push(first);
    const [, port] = await waitForStdout(first, /Listening on http:\/\/127\.0\.0\.1:(\d+) \(no key needed\)/);
    const { io, out } = memoryIO();
    const code = await main(['serve', '--edge-logs', tmp.path('*.ndjson'), '--port', port!, '--api-key', 'k'], io, 'test');
    expect(code).toBe(2);
    // The serve command also warns that no function logs were given (one line before the error).
    expect(out.stderr).toBe(
      'warning: no --function-logs given: functions.invocation-stats will answer no rows\n' + `error [invalid_option]: Port ${port} on 127.0.0.1 is already in use; choose another with --port.\n`,
    );
    first.kill('SIGINT');
    await new Promise((resolve) => first.on('exit', resolve));
  });
});

describe("serve's server", () => {
  it("serves a URL of 64 KiB (Node's own limit is 16 KiB): Supabase Studio sends its SQL in the query string", async () => {
    const ep = await createEndpoints({ sources: {}, now: () => new Date(NOW), cache: false });
    const running = await startServer(ep, { host: '127.0.0.1', port: 0, apiKeys: ['k'] });
    try {
      const path = '/api/endpoints/logs.all?project=a&junk=';
      const response = await fetch(`${running.url}${path}${'x'.repeat(64 * 1024 - path.length - 'http://localhost'.length)}`, { headers: { 'X-API-KEY': 'k' } });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ result: [] });
    } finally {
      await running.stop();
    }
  });
});

describe('graceful shutdown', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('stops accepting, answers the requests in flight, then closes the endpoints', async () => {
    const held = heldEngine();
    const ep = await createEndpoints({ sources: {}, engine: held.engine, now: () => new Date(NOW), cache: false });
    const running = await startServer(ep, { host: '127.0.0.1', port: 0, apiKeys: ['k'] });
    stops.push(() => running.stop());
    const inFlight = fetch(`${running.url}/api/endpoints/logs.all?project=a&project_tier=FREE`, { headers: { 'X-API-KEY': 'k' } });
    const second = fetch(`${running.url}/api/endpoints/logs.all?project=b&project_tier=FREE`, { headers: { 'X-API-KEY': 'k', Connection: 'close' } });
    await held.running(2);

    const stopped = running.stop();
    // No new connections once stopping began.
    await expect(fetch(`${running.url}/health`, { headers: { Connection: 'close' } })).rejects.toThrow();
    held.open();
    const [a, b] = await Promise.all([inFlight, second]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(((await a.json()) as any).result).toEqual([]);
    await stopped;
    await expect(ep.ping()).rejects.toMatchObject({ code: 'closed' });
  });

  it('keeps an idle connection 65 s, longer than a proxy in front of it (Kong: 60 s), and tells clients so', async () => {
    const ep = await createEndpoints({ sources: {}, now: () => new Date(NOW), cache: false });
    const running = await startServer(ep, { host: '127.0.0.1', port: 0, apiKeys: ['k'] });
    stops.push(() => running.stop());
    const response = await fetch(`${running.url}/health`);
    await response.arrayBuffer();
    expect(response.headers.get('keep-alive')).toBe('timeout=65');
    expect(running.server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(running.server.headersTimeout).toBeGreaterThan(KEEP_ALIVE_TIMEOUT_MS);
  });

  it('closes a kept-alive connection once its answer in flight is sent, whatever the keep-alive timeout', async () => {
    const held = heldEngine();
    const ep = await createEndpoints({ sources: {}, engine: held.engine, now: () => new Date(NOW), cache: false });
    const running = await startServer(ep, { host: '127.0.0.1', port: 0, apiKeys: ['k'] });
    stops.push(() => running.stop());
    // No idle timer of its own: only the stop can close this connection.
    running.server.keepAliveTimeout = 0;
    const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /api/endpoints/logs.all?project=a&project_tier=FREE HTTP/1.1\r\nHost: x\r\nX-API-KEY: k\r\nConnection: keep-alive\r\n\r\n');
    await held.running(1);
    const stopped = running.stop();
    held.open();
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received.toLowerCase()).toContain('connection: keep-alive');
    await stopped;
  });

  it('past the grace period, answers the requests still running 503 closed, then closes the endpoints', async () => {
    const held = heldEngine();
    const ep = await createEndpoints({ sources: {}, engine: held.engine, now: () => new Date(NOW), cache: false });
    const running = await startServer(ep, { host: '127.0.0.1', port: 0, apiKeys: ['k'], shutdownGraceMs: 0 });
    const inFlight = fetch(`${running.url}/api/endpoints/logs.all?project=a&project_tier=FREE`, { headers: { 'X-API-KEY': 'k', 'X-Request-Id': 'req-1' } });
    await held.running(1);
    // The held engine ignores close: only the grace period's end can answer this request.
    await running.stop();
    const response = await inFlight;
    expect(response.status).toBe(503);
    expect(response.headers.get('x-request-id')).toBe('req-1');
    expect(((await response.json()) as any).error.code).toBe('closed');
    await expect(ep.ping()).rejects.toMatchObject({ code: 'closed' });
  });

  it('refuses a negative grace period', async () => {
    const ep = await createEndpoints({ sources: {}, engine: heldEngine().engine, cache: false });
    await expect(startServer(ep, { host: '127.0.0.1', port: 0, auth: false, shutdownGraceMs: -1 })).rejects.toMatchObject({ code: 'invalid_option', option: 'shutdownGraceMs' });
    await ep.close();
  });

  it('serve waits for the signal, then stops gracefully (in process)', async () => {
    const { io, out, signal } = memoryIO({ LOG_ENDPOINTS_API_KEYS: 'k' });
    const done = main(['serve', '--edge-logs', tmp.path('*.ndjson'), '--port', '0', '--now', NOW], io, 'test');
    await expect.poll(() => out.stdout, { timeout: HANG_MS }).toMatch(/Listening on/);
    const url = /Listening on (\S+)/.exec(out.stdout)![1]!;
    expect((await fetch(`${url}/api/endpoints/logs.all?project=abc&project_tier=FREE`, { headers: { 'X-API-KEY': 'k' } })).status).toBe(200);
    signal('SIGINT');
    expect(await done).toBe(0);
    expect(out.stderr).toContain('SIGINT: stopping (answering requests in flight, for up to 30 s)');
    expect(out.stderr).toContain('Stopped.');
  });
});

describe('log-endpoints demo (npm start)', () => {
  it('prints a key and three curl commands that answer as printed, then stops on a signal', async () => {
    const { io, out, signal } = memoryIO();
    // --no-dashboard: `npm test` runs without a page build (the dashboard's own tests build it).
    const done = main(['demo', '--port', '0', '--out', tmp.path('demo'), '--events', '4000', '--now', NOW, '--no-dashboard'], io, 'test');
    await expect.poll(() => out.stdout, { timeout: HANG_MS }).toMatch(/Ctrl\+C stops/);
    const key = /^API key: (\S+)$/m.exec(out.stdout)![1]!;
    const lines = out.stdout.split('\n').filter((line) => line.startsWith('  curl '));
    const commands = lines.filter((line) => !line.includes(' -d '));
    expect(commands).toHaveLength(3);
    for (const command of commands) {
      // Exactly the printed shape: curl -s -H 'X-API-KEY: <key>' '<url>'
      const m = /^ {2}curl -s -H 'X-API-KEY: ([^']+)' '(http:\/\/127\.0\.0\.1:\d+\/api\/endpoints\/[^']+)'$/.exec(command);
      expect(m, command).not.toBeNull();
      expect(m![1]).toBe(key);
      const response = await fetch(m![2]!, { headers: { 'X-API-KEY': m![1]! } });
      expect(response.status, command).toBe(200);
      expect(((await response.json()) as any).result.length, command).toBeGreaterThan(0);
    }
    // The fourth line sends an event, then shows it in logs.all.
    const ingest = lines.filter((line) => line.includes(' -d '));
    expect(ingest).toHaveLength(1);
    const m = /^ {2}curl -s -H 'X-API-KEY: ([^']+)' -H 'Content-Type: application\/json' -d '([^']+)' '([^']+)' && echo && curl -s -H 'X-API-KEY: ([^']+)' '([^']+)'$/.exec(ingest[0]!);
    expect(m, ingest[0]).not.toBeNull();
    const posted = await fetch(m![3]!, { method: 'POST', headers: { 'X-API-KEY': m![1]!, 'Content-Type': 'application/json' }, body: m![2]! });
    expect(await posted.json()).toEqual({ message: 'Logged!' });
    const shown = (await (await fetch(m![5]!, { headers: { 'X-API-KEY': m![4]! } })).json()) as any;
    expect(shown.result.map((r: any) => r.event_message)).toContain(JSON.parse(m![2]!).message);
    expect(out.stderr).toMatch(/Writing demo logs: 100% \(6000\/6000\)/);
    signal('SIGINT');
    expect(await done).toBe(0);
  });
});

describe('serve tells what will answer nothing', () => {
  const tmp = tempDir('le-serve-warn-');
  afterAll(() => tmp.cleanup());

  it('warns on stderr for a glob that matches nothing and for a log not given, then serves', async () => {
    writeLines(tmp.path('edge.ndjson'), [edgeEvent({ timestamp: '2026-11-21T11:00:00Z' })]);
    const { io, out, signal } = memoryIO();
    const typo = tmp.path('edgee', '*.ndjson');
    const done = main(['serve', '--edge-logs', tmp.path('edge.ndjson'), '--edge-logs', typo, '--port', '0', '--no-auth'], io, 'test');
    await vi.waitFor(() => expect(out.stdout).toMatch(/Listening on/), { timeout: HANG_MS });
    signal('SIGTERM');
    expect(await done).toBe(0);
    expect(out.stderr).toContain(`warning: --edge-logs '${typo}' matches no log file`);
    expect(out.stderr).toContain('warning: no --function-logs given: functions.invocation-stats will answer no rows');
  });
});

describe('serve: shutdown with a query in flight (a real process, its DuckDB runs held by a test hook)', () => {
  const HOLD = './test/support/hold-duckdb-queries.ts';
  const logsAll = (url: string) => fetch(`${url}/api/endpoints/logs.all?project=abc&project_tier=FREE`);
  const exitOf = (child: ReturnType<typeof spawnCli>) => new Promise<number | null>((resolve) => child.on('exit', resolve));

  it('lets a running query finish within the grace period, then exits 0', async () => {
    // A grace far above the query's run time, however busy the machine.
    const child = spawnCli(['serve', '--edge-logs', tmp.path('*.ndjson'), '--port', '0', '--now', NOW, '--no-auth', '--shutdown-grace', '600'], {}, [HOLD]);
    children.push(child);
    const [, url] = await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const exited = exitOf(child);
    const answer = logsAll(url!);
    await waitForStderr(child, /^held$/m);
    child.kill('SIGTERM');
    await waitForStderr(child, /SIGTERM: stopping \(answering requests in flight, for up to 600 s\)/);
    child.kill('SIGUSR2'); // the query may go on now
    const response = await answer;
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).result.map((r: any) => r.id)).toEqual(['e1']);
    expect(await exited).toBe(0);
    expect(child.output.stderr).toContain('Stopped.');
  });

  it('past --shutdown-grace, answers the query still running 503 closed (never a reset) and exits 0', async () => {
    const child = spawnCli(['serve', '--edge-logs', tmp.path('*.ndjson'), '--port', '0', '--now', NOW, '--no-auth', '--shutdown-grace', '0.5'], {}, [HOLD]);
    children.push(child);
    const [, url] = await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const exited = exitOf(child);
    const answer = logsAll(url!);
    await waitForStderr(child, /^held$/m);
    child.kill('SIGTERM'); // the held query never finishes by itself: the grace period always runs out
    const response = await answer;
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toEqual({ error: { code: 'closed', message: 'The server is shutting down; retry shortly.', status: 503 } });
    expect(await exited).toBe(0);
    expect(child.output.stderr).toContain('SIGTERM: stopping (answering requests in flight, for up to 0.5 s)');
    expect(child.output.stderr).toContain('Stopped.');
  });

  it('refuses a bad --shutdown-grace', async () => {
    const { io, out } = memoryIO({ LOG_ENDPOINTS_API_KEYS: 'k' });
    expect(await main(['serve', '--edge-logs', tmp.path('*.ndjson'), '--shutdown-grace', 'soon'], io, 'test')).toBe(2);
    expect(out.stderr).toMatch(/^error: --shutdown-grace must be a number of seconds from 0 to 86400, not "soon"\./);
  });
});
