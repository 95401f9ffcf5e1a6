import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-stall-');
const children: ReturnType<typeof spawnCli>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

/**
 * Sends `body` to a real `serve --data-dir` while another client asks `/health` without pause,
 * one request after the other: the answer, and how many health checks were answered meanwhile.
 */
async function againstHealth(url: string, body: Uint8Array, headers: Record<string, string>) {
  let done = false;
  let answered = 0;
  const health = (async () => {
    while (!done) {
      const response = await fetch(`${url}/health`);
      await response.arrayBuffer();
      answered++;
    }
  })();
  // The health client is running before the body goes.
  while (answered < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  const response = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  const answer = await response.text();
  const during = answered;
  done = true;
  await health;
  return { status: response.status, answer, healthChecksDuring: during - 3 };
}

describe('no request stalls the server (docs/durability.md, "What ingest accepts")', () => {
  it('a body nested 6,000,000 levels deep (12 KB of gzip) is refused at once, and a body that is slow to parse is parsed while /health answers', async () => {
    // A budget whose compaction takes an 11 MB event (the default's takes 4.36 MiB: src/managed/largest-event.ts).
    const child = spawnCli(['serve', '--data-dir', tmp.path('data'), '--port', '0', '--now', NOW, '--no-cache', '--no-auth', '--memory-limit', '4GB']);
    children.push(child);
    const url = (await waitForStdout(child, /Listening on (http:\/\/\S+) /))[1]!;

    const deep = gzipSync(Buffer.from(`${'['.repeat(6_000_000)}${']'.repeat(6_000_000)}`), { level: 9 });
    const refused = await againstHealth(url, deep, { 'Content-Encoding': 'gzip' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.answer)).toMatchObject({ error: { code: 'invalid_body', message: expect.stringContaining('nested more than 128 levels') } });
    // That the scan refuses it before the rest is inflated or parsed is proven in
    // test/ingest-bodies.test.ts (by the bytes inflated); here, that a real server answers so.

    // One event with 650,000 keys (11 MB): JSON.parse and JSON.stringify of it take seconds of one thread.
    const keys = Array.from({ length: 650_000 }, (_, i) => `"k${i}":${i}`).join(',');
    const wide = Buffer.from(`[{"message":"wide","project":"wide","timestamp":"2026-11-21T11:00:00Z","metadata":{${keys}}}]`);
    const accepted = await againstHealth(url, wide, {});
    expect(accepted.status).toBe(200);
    // Health checks were answered while the body was parsed: the event loop was not held by it.
    expect(accepted.healthChecksDuring).toBeGreaterThan(0);

    const rows = await fetch(`${url}/api/endpoints/logs.all?project=wide&project_tier=FREE`).then((r) => r.json() as Promise<{ result: Array<{ metadata: Record<string, number> }> }>);
    expect(rows.result).toHaveLength(1);
    expect(rows.result[0]!.metadata.k649999).toBe(649999);

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
