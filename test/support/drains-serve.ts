import { expect } from 'vitest';
import { spawnCli, waitForStdout } from './cli';

/** The Supabase keys the drains tests serve with: Studio's private token and Vector's public one. */
const ENV = { LOGFLARE_PRIVATE_ACCESS_TOKEN: 'private', LOGFLARE_PUBLIC_ACCESS_TOKEN: 'public' };

/**
 * `serve --supabase` on the data dir (a real process, so a test can kill -9 it), once it listens
 * (`command` names another server command, e.g. `['clickhouse', 'serve', '--url', ...]`):
 * `studio` makes Studio's calls with the private token, `ingest` posts GoTrue events
 * `${prefix}${from}` ... in requests of 10 (each answered 200), `drain` makes a drain of GoTrue's
 * events as Studio does, `kill` sends SIGKILL.
 *
 * @example
 * const server = await serveWithDrains(dir, ['--wal-segment-bytes', '4096']);
 * await server.ingest('e', 0, 100);
 */
export async function serveWithDrains(dataDir: string, args: string[] = [], env: Record<string, string> = {}, command: string[] = ['serve']) {
  const child = spawnCli([...command, '--supabase', '--data-dir', dataDir, '--port', '0', ...args], { ...ENV, ...env });
  const url = (await waitForStdout(child, /Listening on (http:\/\/\S+)/))[1]!;
  const studio = async (method: string, path: string, body?: object) => {
    const response = await fetch(`${url}${path}`, { method, headers: { Authorization: 'Bearer private', 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as unknown) : null };
  };
  const ingest = async (prefix: string, from: number, count: number) => {
    for (let at = from; at < from + count; at += 10) {
      const events = Array.from({ length: Math.min(10, from + count - at) }, (_, k) => ({ id: `${prefix}${at + k}`, message: `line ${at + k}` }));
      const response = await fetch(`${url}/api/logs?source_name=gotrue.logs.prod`, {
        method: 'POST',
        headers: { 'X-API-KEY': 'public', 'Content-Type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(response.status).toBe(200);
    }
  };
  /** A drain made as Studio makes it (`type`, `config`), with its rule for GoTrue's source: every event. */
  const drain = async (type: string, config: object, name = type): Promise<{ id: number; token: string }> => {
    const created = await studio('POST', '/api/backends', { name, description: '', type, config, metadata: { type: 'log-drain' } });
    expect(created.status).toBe(201);
    const made = created.json as { id: number; token: string };
    const gotrue = ((await studio('GET', '/api/sources')).json as { id: string; name: string }[]).find((s) => s.name.toLowerCase() === 'gotrue.logs.prod')!;
    expect((await studio('POST', '/api/rules', { backend_id: made.id, lql_string: '~".*?"', source_id: gotrue.id })).status).toBe(201);
    return made;
  };
  const kill = () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGKILL')));
  return { child, studio, ingest, drain, kill };
}
