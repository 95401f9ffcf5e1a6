import { expect } from 'vitest';
import { spawnCli, waitForStdout } from './cli';

/** The Supabase keys the drains tests serve with: Studio's private token and Vector's public one. */
const ENV = { LOGFLARE_PRIVATE_ACCESS_TOKEN: 'private', LOGFLARE_PUBLIC_ACCESS_TOKEN: 'public' };

/**
 * `serve --supabase` on the data dir (a real process, so a test can kill -9 it), once it listens
 * (`command` names another server command, e.g. `['clickhouse', 'serve', '--url', ...]`):
 * `studio` makes Studio's calls with the private token, `ingest` posts GoTrue events
 * `${prefix}${from}` ... in requests of 10 (each answered 200), `kill` sends SIGKILL.
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
  const kill = () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGKILL')));
  return { child, studio, ingest, kill };
}
