import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { walDir } from '../src/managed/wal/wal-set';
import { spawnCli, waitForStderr, waitForStdout } from './support/cli';
import { HANG_MS } from './support/hang-guard';
import { tempDir } from './support/log-files';
import { writeBacklog } from './support/wal-backlog';

const KEY = 'restart-key';
const NOW = '2026-11-21T12:00:00Z';
const CONFIG = fileURLToPath(new URL('./support/configs/census.config.ts', import.meta.url));
const tmp = tempDir('le-restart-');
const children: ReturnType<typeof spawnCli>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

function start(dataDir: string, env: Record<string, string> = {}) {
  const child = spawnCli(['serve', '--data-dir', dataDir, '--api-key', KEY, '--port', '0', '--now', NOW, '--no-cache', '--config', CONFIG], env);
  children.push(child);
  return { child, url: waitForStdout(child, /Listening on (http:\/\/\S+) /).then((m) => m[1]!) };
}

const event = (id: string, i: number) => ({
  id,
  timestamp: new Date(Date.parse('2026-11-21T00:00:00Z') + i * 100).toISOString(),
  project: `p${i % 20}`,
  event_message: `GET | 200 | /rest/v1/items/${i}`,
  metadata: { request: { method: 'GET', path: `/rest/v1/items/${i}`, url: `https://p${i % 20}.supabase.co/rest/v1/items/${i}` }, response: { status_code: 200 } },
});

async function ingest(url: string, ids: string[]): Promise<number> {
  const response = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
    method: 'POST',
    headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify(ids.map((id, i) => event(id, 400_000 + i))),
  });
  await response.arrayBuffer();
  return response.status;
}

async function census(url: string): Promise<{ status: number; row: { events: number; ids: number; doubled: number }; skipped: string }> {
  const response = await fetch(`${url}/api/endpoints/census.edge`, { headers: { 'X-API-KEY': KEY } });
  const body = (await response.json()) as { result: Array<{ events: number; ids: number; doubled: number }> };
  return { status: response.status, row: body.result[0]!, skipped: response.headers.get('X-Skipped-Files') ?? '' };
}

describe('a restart after kill -9 on a large backlog (docs/durability.md, "Crashes and recovery")', () => {
  it('answers /health, queries and ingest before its recovery ends, naming the backlog it has not read; then every acknowledged event once', async () => {
    const dataDir = tmp.path('data');
    // What a server that acknowledged 300,000 events and died before compacting them leaves: 14
    // segments, about 100 MB (written directly; a server would take minutes to be sent them).
    const backlog = writeBacklog(walDir(dataDir, 'edgeLogs'), { events: 300_000, segmentBytes: 8 * 1024 * 1024, event: (i) => event(`b-${i}`, i) });
    const acked = [...backlog.ids];
    /** Events of the segments an answer names as being recovered (written by writeBacklog). */
    const named = (skipped: string) => [...skipped.matchAll(/wal\/(\d{20}\.ndjson);reason=recovering/g)].reduce((n, m) => n + backlog.events.get(m[1]!)!, 0);

    // A server starts on it, takes more events, and is killed with -9.
    const first = start(dataDir);
    const firstUrl = await first.url;
    for (let batch = 0; batch < 5; batch++) {
      const ids = Array.from({ length: 20 }, (_, i) => `a-${batch}-${i}`);
      expect(await ingest(firstUrl, ids)).toBe(200);
      acked.push(...ids);
    }
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');

    // The restart, its background recovery held: it serves anyway, and says what it has not read.
    const second = start(dataDir, { LOG_ENDPOINTS_HOLD: 'wal:recovery' });
    const url = await second.url;
    await waitForStderr(second.child, /held wal:recovery/);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const during = await census(url);
    expect(during.status).toBe(200);
    expect(during.skipped).toMatch(/wal\/\d{20}\.ndjson;reason=recovering/);
    // Every acknowledged event is read once, or is in a segment the answer names.
    expect(during.row.doubled).toBe(0);
    expect(during.row.events + named(during.skipped)).toBe(acked.length);
    // Ingest is taken during the recovery (a new segment; the old ones are older).
    const late = Array.from({ length: 20 }, (_, i) => `late-${i}`);
    expect(await ingest(url, late)).toBe(200);
    acked.push(...late);
    const next = await census(url);
    expect(next.row.doubled).toBe(0);
    expect(next.row.events + named(next.skipped)).toBe(acked.length);

    // Released: once recovered and compacted, nothing is named any more and every event is read once.
    second.child.kill('SIGUSR2');
    let after = await census(url);
    for (const deadline = Date.now() + HANG_MS; after.skipped !== ''; after = await census(url)) {
      expect(after.row.doubled).toBe(0);
      expect(after.row.events + named(after.skipped)).toBe(acked.length);
      if (Date.now() > deadline) throw new Error(`still recovering: ${after.skipped}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(after.row).toEqual({ events: acked.length, ids: acked.length, doubled: 0 });
    second.child.kill('SIGTERM');
    const [code] = await once(second.child, 'exit');
    expect(code).toBe(0);
  });
});
